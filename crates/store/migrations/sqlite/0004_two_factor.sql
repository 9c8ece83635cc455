-- TOTP two-factor authentication (RFC 6238) and one-time recovery codes.
ALTER TABLE users ADD COLUMN totp_secret TEXT;
-- A secret being set up: it becomes totp_secret once a code from it is verified.
ALTER TABLE users ADD COLUMN totp_pending TEXT;
-- The last time step whose code was accepted: a code is good only once.
ALTER TABLE users ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;
-- A session that has passed the password but not yet the second factor.
ALTER TABLE sessions ADD COLUMN pending_2fa BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE recovery_codes (
    user_id   BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash TEXT   NOT NULL,
    used_at   BIGINT,
    PRIMARY KEY (user_id, code_hash)
);
