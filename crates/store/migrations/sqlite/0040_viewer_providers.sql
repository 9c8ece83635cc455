-- A private page's own identity provider for its viewers (a customer's
-- tenant; docs/public-pages.md, "Viewers"), in place of the team's. The
-- client secret is sealed with the server key, as the team's is (NULL:
-- withheld by the export it was imported from; set it again).
CREATE TABLE viewer_providers (
    page_id        BIGINT  NOT NULL PRIMARY KEY REFERENCES status_pages(id) ON DELETE CASCADE,
    issuer         TEXT    NOT NULL,
    client_id      TEXT    NOT NULL,
    client_secret  TEXT,
    button_label   TEXT    NOT NULL,
    admit_all      BOOLEAN NOT NULL,
    updated_at     BIGINT  NOT NULL
);
