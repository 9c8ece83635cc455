-- A visitor's subscription to a private page made with a viewer's sign-in
-- remembers that viewer: removing the viewer removes what they subscribed
-- to, so news of the page stops with their access.
ALTER TABLE subscribers ADD COLUMN viewer_id BIGINT REFERENCES page_viewers(id) ON DELETE CASCADE;
