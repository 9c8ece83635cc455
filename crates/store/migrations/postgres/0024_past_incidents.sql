-- How many days of incidents the public page lists day by day ("Past incidents"; 0: none).
ALTER TABLE status_pages ADD COLUMN past_incident_days INTEGER NOT NULL DEFAULT 14;
