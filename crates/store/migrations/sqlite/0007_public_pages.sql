-- A private page can be opened by visitors who know its password (argon2 PHC string).
ALTER TABLE status_pages ADD COLUMN password_hash TEXT;

-- Links shown on a public page (documentation, support, ...), in order.
CREATE TABLE quick_links (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id    BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    label      TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    created_at BIGINT  NOT NULL
);
CREATE INDEX quick_links_page ON quick_links(page_id, position);
