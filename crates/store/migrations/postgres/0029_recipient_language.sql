-- The language each recipient is written to: a subscriber's is the one
-- its page was read in when it subscribed, a team channel's its own
-- setting. Empty: the install's default language of public pages.
ALTER TABLE subscribers ADD COLUMN lang TEXT NOT NULL DEFAULT '';
ALTER TABLE notification_channels ADD COLUMN lang TEXT NOT NULL DEFAULT '';
