-- Step-up: a short-lived proof, tied to one session, that its user just
-- re-entered their password or a TOTP code. Sensitive actions require one.
CREATE TABLE step_ups (
    token_hash  TEXT   PRIMARY KEY,
    session_id  TEXT   NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    verified_at BIGINT,
    method      TEXT
);
CREATE INDEX step_ups_session ON step_ups(session_id);
