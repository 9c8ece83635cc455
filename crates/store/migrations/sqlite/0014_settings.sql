-- Install-wide documents an operator changes from the browser: `settings`
-- (site name, default page, default language) and `features` (the feature
-- switches), each stored as JSON so a new setting needs no migration (a
-- missing key reads as its default).
CREATE TABLE settings (
    name       TEXT   NOT NULL PRIMARY KEY,
    value      TEXT   NOT NULL,
    updated_at BIGINT NOT NULL
);
