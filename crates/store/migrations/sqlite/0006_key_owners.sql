-- Keys created by a signed-in user belong to them (CLI keys belong to nobody).
ALTER TABLE api_keys ADD COLUMN user_id BIGINT REFERENCES users(id) ON DELETE CASCADE;
CREATE INDEX api_keys_user ON api_keys(user_id);
