-- Saved starting points for incidents: picked when composing one, they fill
-- the title, status, impact and first message.
CREATE TABLE incident_templates (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE,
    title      TEXT    NOT NULL,
    message    TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    impact     TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL
);
