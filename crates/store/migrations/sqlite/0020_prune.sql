-- The hourly job that prunes the delivery log and the outbox (store
-- retention.rs); it moves itself on after each run.
INSERT INTO jobs (kind, dedupe_key, payload, run_at, created_at)
VALUES ('prune', 'prune', '{}', 0, 0)
ON CONFLICT (dedupe_key) DO NOTHING;
