-- Private pages open to viewers (docs/private-pages.md): people outside the
-- team who sign in with a link sent to their email. `viewers` turns it on
-- for a page; `viewer_domains` (a JSON array) lets anyone of those email
-- domains in, beside the invited ones.
ALTER TABLE page_access ADD COLUMN viewers BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE page_access ADD COLUMN viewer_domains TEXT NOT NULL DEFAULT '[]';

-- A page's viewers: invited by an operator, or made at the first sign-in
-- of an allowed domain. `secret` keys the HMAC of the viewer's cookie:
-- removing the viewer (or a new secret) ends every cookie at once.
CREATE TABLE page_viewers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id       BIGINT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    email         TEXT   NOT NULL,
    secret        TEXT   NOT NULL,
    invited       BOOLEAN NOT NULL,
    created_at    BIGINT NOT NULL,
    signed_in_at  BIGINT,
    UNIQUE (page_id, email)
);

-- Sign-in links sent and not yet used (the token hashed). Taken once,
-- within fifteen minutes.
CREATE TABLE viewer_links (
    token_hash  TEXT   PRIMARY KEY,
    page_id     BIGINT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    email       TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX viewer_links_email ON viewer_links (page_id, email, created_at);
