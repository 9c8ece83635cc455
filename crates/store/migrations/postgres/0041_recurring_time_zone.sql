-- A recurring window's own time zone (an imported Uptime Kuma window kept
-- in America/Chicago on a page in UTC; docs/maintenance.md, "Recurring
-- maintenance"). NULL: the page's zone, as before.
ALTER TABLE recurring_maintenance ADD COLUMN time_zone TEXT;
