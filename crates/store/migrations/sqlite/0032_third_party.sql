-- Third-party components (docs/third-party.md): a component that mirrors a
-- vendor's published status. etag and last_modified are the vendor's
-- validators for the next conditional GET; vendor_status is what the
-- vendor said at the last poll read (the component moves only when that
-- changes, so a person's move stands until the vendor moves);
-- vendor_components is the JSON list offered for the operator's choice.
-- Polls are leased like monitors' checks (locked_until).
CREATE TABLE third_party (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    component_id      BIGINT  NOT NULL UNIQUE REFERENCES components(id) ON DELETE CASCADE,
    kind              TEXT    NOT NULL,
    url               TEXT    NOT NULL,
    vendor_component  TEXT    NOT NULL,
    link              TEXT    NOT NULL,
    notify            BOOLEAN NOT NULL,
    interval_seconds  BIGINT  NOT NULL,
    feed_status       TEXT    NOT NULL,
    vendor_name       TEXT    NOT NULL DEFAULT '',
    vendor_url        TEXT    NOT NULL DEFAULT '',
    vendor_status     TEXT,
    vendor_components TEXT    NOT NULL DEFAULT '[]',
    etag              TEXT,
    last_modified     TEXT,
    last_polled_at    BIGINT,
    last_error        TEXT,
    next_run_at       BIGINT  NOT NULL,
    locked_until      BIGINT,
    created_at        BIGINT  NOT NULL,
    updated_at        BIGINT  NOT NULL
);
CREATE INDEX third_party_due ON third_party(next_run_at);
