-- A component's own check (docs/monitors.md). `config` is what the operator
-- set (JSON, core MonitorConfig); the rest is the running state: the
-- verdict, the counters the rule needs, who holds the next check
-- (`next_run_at`, leased through `locked_until` like jobs), and whether an
-- operator took the component over (`manual`).
CREATE TABLE monitors (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    component_id    BIGINT  NOT NULL UNIQUE REFERENCES components(id) ON DELETE CASCADE,
    kind            TEXT    NOT NULL,
    config          TEXT    NOT NULL,
    enabled         BOOLEAN NOT NULL,
    heartbeat_token TEXT    UNIQUE,
    state           TEXT    NOT NULL DEFAULT 'unknown',
    failures        BIGINT  NOT NULL DEFAULT 0,
    successes       BIGINT  NOT NULL DEFAULT 0,
    manual          BOOLEAN NOT NULL DEFAULT FALSE,
    incident_id     BIGINT,
    last_check_at   BIGINT,
    last_latency_ms BIGINT,
    last_error      TEXT,
    last_beat_at    BIGINT,
    next_run_at     BIGINT  NOT NULL,
    locked_until    BIGINT,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX monitors_due ON monitors(next_run_at) WHERE enabled;

-- Every check's result, newest read first; rolled up and pruned by age.
CREATE TABLE monitor_checks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    monitor_id  BIGINT  NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
    at          BIGINT  NOT NULL,
    ok          BOOLEAN NOT NULL,
    latency_ms  BIGINT,
    status_code BIGINT,
    error       TEXT
);
CREATE INDEX monitor_checks_monitor ON monitor_checks(monitor_id, at);
