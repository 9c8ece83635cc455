-- Viewers of a private page may sign in through the team's identity
-- provider (docs/public-pages.md, "Viewers"), beside mailed links; a
-- sign-in under way there remembers the page it is for.
ALTER TABLE page_access ADD COLUMN viewer_sso BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE sso_logins ADD COLUMN viewer_page BIGINT;
