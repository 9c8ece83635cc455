-- Who may open a page beyond its visibility (docs/private-pages.md): the
-- networks (a JSON array of CIDR strings) whose clients may open it. A page
-- without a row, or with an empty list, is held to no network.
CREATE TABLE page_access (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id           BIGINT NOT NULL UNIQUE REFERENCES status_pages(id) ON DELETE CASCADE,
    allowed_networks  TEXT   NOT NULL,
    updated_at        BIGINT NOT NULL
);
