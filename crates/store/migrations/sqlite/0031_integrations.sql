-- Alerts in (docs/integrations.md): an integration is one sender bound to
-- one page, with its rules (JSON, tried in order) and the hash of the token
-- in its receiver URL. secret is the sealed signing secret of senders that
-- sign (PagerDuty, generic), or NULL.
CREATE TABLE integrations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id     BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    token_hash  TEXT    NOT NULL UNIQUE,
    secret      TEXT,
    rules       TEXT    NOT NULL,
    enabled     BOOLEAN NOT NULL DEFAULT TRUE,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);

-- What one group of a sender's alerts did: state is draft (an incident
-- waiting for a person), open (components moved, maybe an incident),
-- closed (its alerts resolved) or dismissed (a draft nobody approved).
-- components is the JSON list of {componentId, status} it moved or would.
-- approve_token is the sealed secret of a draft's approve link.
CREATE TABLE alert_groups (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    integration_id BIGINT  NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
    group_key      TEXT    NOT NULL,
    rule_index     BIGINT  NOT NULL,
    state          TEXT    NOT NULL,
    incident_id    BIGINT  REFERENCES incidents(id) ON DELETE SET NULL,
    title          TEXT    NOT NULL,
    message        TEXT    NOT NULL,
    impact         TEXT    NOT NULL,
    components     TEXT    NOT NULL,
    opened_at      BIGINT  NOT NULL,
    closed_at      BIGINT,
    approve_token  TEXT
);
CREATE UNIQUE INDEX alert_groups_live ON alert_groups(integration_id, group_key) WHERE state IN ('draft', 'open');

-- Each alert a sender keeps firing, by the sender's own fingerprint: a
-- repeat changes nothing, and a group closes when none of its alerts fires.
CREATE TABLE integration_alerts (
    integration_id BIGINT  NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
    fingerprint    TEXT    NOT NULL,
    group_id       BIGINT  REFERENCES alert_groups(id) ON DELETE SET NULL,
    firing         BOOLEAN NOT NULL,
    last_seen      BIGINT  NOT NULL,
    PRIMARY KEY (integration_id, fingerprint)
);

-- What each alert received did, newest kept (the integration's log).
CREATE TABLE integration_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    integration_id BIGINT  NOT NULL REFERENCES integrations(id) ON DELETE CASCADE,
    at             BIGINT  NOT NULL,
    fingerprint    TEXT    NOT NULL,
    firing         BOOLEAN NOT NULL,
    title          TEXT    NOT NULL,
    outcome        TEXT    NOT NULL,
    detail         TEXT    NOT NULL
);
CREATE INDEX integration_events_by ON integration_events(integration_id, id);
