-- Visitors' comments on incidents. `status` is pending until a moderator
-- approves or rejects it (or approved at once when the install does not
-- hold comments). Nothing about the visitor is kept beyond what they typed.
CREATE TABLE comments (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id      BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    incident_id  BIGINT  NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    author       TEXT    NOT NULL,
    body         TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    moderated_at BIGINT
);
CREATE INDEX comments_incident ON comments(incident_id, status, id);
CREATE INDEX comments_queue ON comments(status, id);
