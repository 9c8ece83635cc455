-- What `upstate apply` manages (docs/setup-as-code.md): each object it made
-- or adopted, by kind and id, with the key the file names it by. apply
-- deletes only objects listed here that the file no longer declares, so
-- what people made by hand is never touched.
CREATE TABLE managed (
    kind       TEXT   NOT NULL,
    object_id  BIGINT NOT NULL,
    key        TEXT   NOT NULL,
    PRIMARY KEY (kind, object_id)
);
