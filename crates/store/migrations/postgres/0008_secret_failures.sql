-- Failed checks of every secret (passwords, second factors, page passwords,
-- the setup link), counted per subject: an account, an account from one
-- address, an address, or a thing that dies of failures (a pending sign-in,
-- a step-up). Replaces the sign-in-only counters, whose keys mean nothing now.
DROP TABLE login_throttle;
CREATE TABLE secret_failures (
    key          TEXT    PRIMARY KEY,
    failures     BIGINT  NOT NULL,
    locked_until BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);
CREATE INDEX secret_failures_updated ON secret_failures(updated_at);
