-- The tamper-evident audit log: one row per state change, chained by hash.
CREATE TABLE audit_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    seq         BIGINT NOT NULL UNIQUE,
    at          BIGINT NOT NULL,
    actor_kind  TEXT   NOT NULL,
    actor_id    BIGINT,
    actor_label TEXT   NOT NULL,
    action      TEXT   NOT NULL,
    target_type TEXT   NOT NULL,
    target_id   BIGINT,
    summary     TEXT   NOT NULL,
    client_addr TEXT,
    user_agent  TEXT,
    prev_hash   TEXT   NOT NULL,
    hash        TEXT   NOT NULL
);
CREATE INDEX audit_events_at ON audit_events(at);
CREATE INDEX audit_events_action ON audit_events(action);
CREATE INDEX audit_events_target ON audit_events(target_type, target_id);

-- The chain's head, one row: appending locks it, so concurrent writers (also
-- on several PostgreSQL instances) extend the chain one after another.
CREATE TABLE audit_head (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    seq  BIGINT NOT NULL,
    hash TEXT   NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
