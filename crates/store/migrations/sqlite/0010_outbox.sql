-- Change events, written by the transaction that makes the change (beside its
-- audit event), in commit order per writer. `payload` is the event as JSON,
-- `kind` its dotted name. No foreign key: a page's deletion is an event too.
CREATE TABLE outbox (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             BIGINT  NOT NULL,
    status_page_id BIGINT  NOT NULL,
    kind           TEXT    NOT NULL,
    payload        TEXT    NOT NULL
);
CREATE INDEX outbox_page ON outbox(status_page_id, id);
