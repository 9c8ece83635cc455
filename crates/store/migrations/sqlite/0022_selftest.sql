-- One row the self-test writes and reads back (GET /api/selftest).
CREATE TABLE selftest (
    id BIGINT PRIMARY KEY,
    at BIGINT NOT NULL
);
