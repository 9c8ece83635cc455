-- The status page a person works on in the admin interface (their "current
-- page"). No foreign key: a deleted page falls back to the first one.
ALTER TABLE users ADD COLUMN current_page_id BIGINT;
