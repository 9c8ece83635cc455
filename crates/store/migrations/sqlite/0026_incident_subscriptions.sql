-- Visitors who follow one incident (from its page) rather than the page:
-- `scope` 'incidents' hears only of the incidents listed here, so deleting
-- an incident (its rows cascade) never turns such a subscriber into one of
-- the whole page. A page subscriber may list incidents too; they add
-- nothing it does not already hear.
ALTER TABLE subscribers ADD COLUMN scope TEXT NOT NULL DEFAULT 'page';
CREATE TABLE subscriber_incidents (
    subscriber_id BIGINT NOT NULL REFERENCES subscribers(id) ON DELETE CASCADE,
    incident_id   BIGINT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
    PRIMARY KEY (subscriber_id, incident_id)
);
CREATE INDEX subscriber_incidents_incident ON subscriber_incidents(incident_id);
