-- A monitor's checks summed by minute, hour and day (span_ms), written as
-- each check is recorded (docs/monitors.md, "Measurements"). h0..h11 count
-- latencies in the buckets of core::measurements::BOUNDS_MS; they add up,
-- so percentiles of any span come from the sums. Pruned by age per span.
CREATE TABLE monitor_stats (
    monitor_id  BIGINT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
    span_ms     BIGINT NOT NULL,
    bucket      BIGINT NOT NULL,
    checks      BIGINT NOT NULL,
    failures    BIGINT NOT NULL,
    timed       BIGINT NOT NULL,
    latency_sum BIGINT NOT NULL,
    latency_min BIGINT,
    latency_max BIGINT,
    h0 BIGINT NOT NULL DEFAULT 0,
    h1 BIGINT NOT NULL DEFAULT 0,
    h2 BIGINT NOT NULL DEFAULT 0,
    h3 BIGINT NOT NULL DEFAULT 0,
    h4 BIGINT NOT NULL DEFAULT 0,
    h5 BIGINT NOT NULL DEFAULT 0,
    h6 BIGINT NOT NULL DEFAULT 0,
    h7 BIGINT NOT NULL DEFAULT 0,
    h8 BIGINT NOT NULL DEFAULT 0,
    h9 BIGINT NOT NULL DEFAULT 0,
    h10 BIGINT NOT NULL DEFAULT 0,
    h11 BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (monitor_id, span_ms, bucket)
) WITHOUT ROWID;

-- When the certificate of an HTTPS monitor's target expires, as last seen.
ALTER TABLE monitors ADD COLUMN cert_expires_at BIGINT;

-- A page's switch for the response-time charts of its monitored components.
ALTER TABLE status_pages ADD COLUMN show_response_times BOOLEAN NOT NULL DEFAULT FALSE;
