-- A password someone else chose (an admin creating the account, or a
-- reset) is changed by its holder at the next sign-in.
ALTER TABLE users ADD COLUMN must_change_password BOOLEAN NOT NULL DEFAULT FALSE;
