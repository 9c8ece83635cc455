-- Audience groups (docs/public-pages.md, "Audiences"): a page's components
-- put in a group are shown only to the viewers the group names, by email or
-- by email domain (`member` is `ann@example.com` or `@example.com`).
-- Components in no group are shown to everyone who opens the page.
CREATE TABLE page_audiences (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id     BIGINT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    name        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (page_id, name)
);

CREATE TABLE audience_components (
    audience_id   BIGINT NOT NULL REFERENCES page_audiences(id) ON DELETE CASCADE,
    component_id  BIGINT NOT NULL REFERENCES components(id) ON DELETE CASCADE,
    PRIMARY KEY (audience_id, component_id)
);
CREATE INDEX audience_components_component ON audience_components (component_id);

CREATE TABLE audience_members (
    audience_id  BIGINT NOT NULL REFERENCES page_audiences(id) ON DELETE CASCADE,
    member       TEXT   NOT NULL,
    PRIMARY KEY (audience_id, member)
);
