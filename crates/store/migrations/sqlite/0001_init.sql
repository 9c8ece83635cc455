-- Upstate schema for SQLite. Timestamps are integer milliseconds since the
-- Unix epoch (UTC) in both backends, so queries compare them the same way.

CREATE TABLE status_pages (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL,
    slug           TEXT    NOT NULL UNIQUE,
    description    TEXT    NOT NULL DEFAULT '',
    logo_url       TEXT,
    favicon_url    TEXT,
    custom_domain  TEXT UNIQUE,
    accent_color   TEXT    NOT NULL,
    is_public      BOOLEAN NOT NULL,
    show_subscribe BOOLEAN NOT NULL,
    show_uptime    BOOLEAN NOT NULL,
    uptime_days    INTEGER NOT NULL,
    time_zone      TEXT    NOT NULL,
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL
);

CREATE TABLE component_groups (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id    BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    created_at BIGINT  NOT NULL
);
CREATE INDEX component_groups_page ON component_groups(page_id, position);

CREATE TABLE components (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id     BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    group_id    BIGINT  REFERENCES component_groups(id) ON DELETE SET NULL,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL,
    position    INTEGER NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
CREATE INDEX components_page ON components(page_id, position);
CREATE INDEX components_group ON components(group_id);

-- Every status a component has had and since when: the source of uptime.
CREATE TABLE component_status_history (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    component_id BIGINT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    status       TEXT   NOT NULL,
    changed_at   BIGINT NOT NULL
);
CREATE INDEX component_status_history_component ON component_status_history(component_id, changed_at);

CREATE TABLE incidents (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id     BIGINT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    title       TEXT   NOT NULL,
    status      TEXT   NOT NULL,
    impact      TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    resolved_at BIGINT
);
CREATE INDEX incidents_page ON incidents(page_id, created_at);

CREATE TABLE incident_components (
    incident_id  BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    component_id BIGINT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    PRIMARY KEY (incident_id, component_id)
);
CREATE INDEX incident_components_component ON incident_components(component_id);

CREATE TABLE incident_updates (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    status      TEXT   NOT NULL,
    message     TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX incident_updates_incident ON incident_updates(incident_id, created_at);

CREATE TABLE maintenance (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id         BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    title           TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL,
    scheduled_start BIGINT  NOT NULL,
    scheduled_end   BIGINT  NOT NULL,
    auto_start      BOOLEAN NOT NULL,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX maintenance_page ON maintenance(page_id, scheduled_start);
CREATE INDEX maintenance_due ON maintenance(status, auto_start, scheduled_start);

-- prev_status: what the component showed before this window put it into
-- maintenance, so the window's end can put it back.
CREATE TABLE maintenance_components (
    maintenance_id BIGINT NOT NULL REFERENCES maintenance(id) ON DELETE CASCADE,
    component_id   BIGINT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    prev_status    TEXT,
    PRIMARY KEY (maintenance_id, component_id)
);
CREATE INDEX maintenance_components_component ON maintenance_components(component_id);

CREATE TABLE maintenance_updates (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    maintenance_id BIGINT NOT NULL REFERENCES maintenance(id) ON DELETE CASCADE,
    status         TEXT   NOT NULL,
    message        TEXT   NOT NULL,
    created_at     BIGINT NOT NULL
);
CREATE INDEX maintenance_updates_maintenance ON maintenance_updates(maintenance_id, created_at);

-- Only a SHA-256 of each secret is kept; the secret is shown once at creation.
CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT   NOT NULL,
    prefix       TEXT   NOT NULL,
    secret_hash  TEXT   NOT NULL UNIQUE,
    scopes       TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT,
    last_used_at BIGINT
);
