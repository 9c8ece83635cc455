-- Visitors who asked to be told of a page's changes: by email (double
-- opt-in: `verified_at` stays NULL until the link in the confirmation is
-- opened, before `confirm_until`), by webhook, or to a chat's incoming
-- webhook. `token` is the subscription's own capability (manage and
-- one-click unsubscribe links); `confirm_token` the opt-in link's.
CREATE TABLE subscribers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id       BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    kind          TEXT    NOT NULL,
    target        TEXT    NOT NULL,
    token         TEXT    NOT NULL UNIQUE,
    verified_at   BIGINT,
    confirm_token TEXT    UNIQUE,
    confirm_until BIGINT,
    confirm_sent  BIGINT,
    created_at    BIGINT  NOT NULL,
    UNIQUE (page_id, kind, target)
);
-- The components a subscriber chose; none: the whole page.
CREATE TABLE subscriber_components (
    subscriber_id BIGINT NOT NULL REFERENCES subscribers(id) ON DELETE CASCADE,
    component_id  BIGINT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    PRIMARY KEY (subscriber_id, component_id)
);
CREATE INDEX subscriber_components_component ON subscriber_components(component_id);
ALTER TABLE deliveries ADD COLUMN subscriber_id BIGINT REFERENCES subscribers(id) ON DELETE CASCADE;
CREATE INDEX deliveries_subscriber ON deliveries(subscriber_id, id);
