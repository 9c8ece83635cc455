-- Where imported records came from: an importer run again (the same
-- Statuspage page, say) finds what it brought before and adds only what is
-- new. local_id is the row's id in target_table.
CREATE TABLE import_sources (
    kind         TEXT   NOT NULL,
    target_table TEXT   NOT NULL,
    source_id    TEXT   NOT NULL,
    local_id     BIGINT NOT NULL,
    imported_at  BIGINT NOT NULL,
    PRIMARY KEY (kind, target_table, source_id)
);
