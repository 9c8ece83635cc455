-- Theming without touching code: an image across the page's header, and the
-- operator's own stylesheet (served as a file of its own, after ours).
ALTER TABLE status_pages ADD COLUMN header_image_url TEXT;
ALTER TABLE status_pages ADD COLUMN custom_css TEXT NOT NULL DEFAULT '';
