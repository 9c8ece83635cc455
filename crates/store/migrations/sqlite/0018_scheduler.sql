-- The reminders sent for a window (one row per window and lead time): the
-- scheduler inserts the row and records the reminder event in one
-- transaction, so a reminder goes out once however many instances sweep.
CREATE TABLE maintenance_reminders (
    maintenance_id BIGINT NOT NULL REFERENCES maintenance(id) ON DELETE CASCADE,
    minutes_before BIGINT NOT NULL,
    sent_at        BIGINT NOT NULL,
    PRIMARY KEY (maintenance_id, minutes_before)
);

-- Recurring maintenance: an RFC 5545 RRULE over a first start given as a
-- wall-clock time in the page's time zone. The scheduler (and GET
-- /api/maintenance/recurring) makes each occurrence within the horizon a
-- maintenance row once: (recurring_id, occurrence_start) is unique.
CREATE TABLE recurring_maintenance (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id          BIGINT  NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    title            TEXT    NOT NULL,
    description      TEXT    NOT NULL,
    rrule            TEXT    NOT NULL,
    first_start      TEXT    NOT NULL,
    duration_minutes BIGINT  NOT NULL,
    auto_start       BOOLEAN NOT NULL,
    horizon_days     BIGINT  NOT NULL,
    component_ids    TEXT    NOT NULL,
    -- Occurrences up to here have been made (a window deleted by an
    -- operator is not made again).
    expanded_until   BIGINT  NOT NULL DEFAULT 0,
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL
);
CREATE INDEX recurring_maintenance_page ON recurring_maintenance(page_id);
ALTER TABLE maintenance ADD COLUMN recurring_id BIGINT REFERENCES recurring_maintenance(id) ON DELETE SET NULL;
ALTER TABLE maintenance ADD COLUMN occurrence_start BIGINT;
CREATE UNIQUE INDEX maintenance_occurrence ON maintenance(recurring_id, occurrence_start);
