-- Notification channels of the team (webhook, Slack, Discord, Teams,
-- Telegram, email) and the deliveries made to them. `secret` signs webhooks
-- (whsec_…) or is a Telegram bot token; the filters are JSON arrays, empty
-- meaning "all".
CREATE TABLE notification_channels (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    target        TEXT    NOT NULL,
    secret        TEXT,
    page_ids      TEXT    NOT NULL DEFAULT '[]',
    component_ids TEXT    NOT NULL DEFAULT '[]',
    event_kinds   TEXT    NOT NULL DEFAULT '[]',
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL
);

-- What a committed change says to people, rendered once when its
-- transaction's events are fanned out (the first outbox row of that
-- transaction carries it).
ALTER TABLE outbox ADD COLUMN notice TEXT;

-- One row per (change, recipient): leased by one sender at a time
-- (locked_until, its token), retried with backoff until give_up_at, kept
-- afterwards as the delivery log. event_id is the outbox row carrying the
-- notice; NULL for a test message. The unique pair makes fan-out idempotent.
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id        BIGINT,
    channel_id      BIGINT  REFERENCES notification_channels(id) ON DELETE CASCADE,
    recipient       TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    attempts        BIGINT  NOT NULL DEFAULT 0,
    run_at          BIGINT  NOT NULL,
    locked_until    BIGINT,
    give_up_at      BIGINT  NOT NULL,
    last_error      TEXT,
    response_status BIGINT,
    response_body   TEXT,
    created_at      BIGINT  NOT NULL,
    finished_at     BIGINT,
    UNIQUE (event_id, recipient)
);
CREATE INDEX deliveries_due ON deliveries(run_at) WHERE status = 'pending';
CREATE INDEX deliveries_channel ON deliveries(channel_id, id);
