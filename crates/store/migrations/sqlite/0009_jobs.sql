-- Background work as rows: leased by one worker at a time (locked_until),
-- retried with backoff, deleted when done. dedupe_key names the one job a
-- thing has (a window's next move), so scheduling it again moves that job.
CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT    NOT NULL,
    dedupe_key   TEXT    NOT NULL UNIQUE,
    payload      TEXT    NOT NULL,
    run_at       BIGINT  NOT NULL,
    attempts     BIGINT  NOT NULL DEFAULT 0,
    locked_until BIGINT,
    last_error   TEXT,
    created_at   BIGINT  NOT NULL
);
CREATE INDEX jobs_due ON jobs(run_at);

-- The next move of every auto-start window that exists already.
INSERT INTO jobs (kind, dedupe_key, payload, run_at, created_at)
SELECT 'maintenance', 'maintenance:' || id, '{}',
       CASE WHEN status = 'scheduled' THEN scheduled_start ELSE scheduled_end END, 0
FROM maintenance WHERE auto_start AND status IN ('scheduled', 'in_progress');
