-- One postmortem (root-cause analysis) per incident: Markdown, a draft until
-- published; published ones show on the incident's public page.
CREATE TABLE postmortems (
    incident_id  BIGINT  PRIMARY KEY REFERENCES incidents(id) ON DELETE CASCADE,
    body         TEXT    NOT NULL,
    published    BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at   BIGINT  NOT NULL,
    published_at BIGINT
);
