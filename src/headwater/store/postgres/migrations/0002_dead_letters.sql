-- Dead letters: Kafka messages that could not become events (not JSON, invalid, too large), kept with
-- where they came from so that their offset can move on without losing them.
CREATE TABLE dead_letters (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic         TEXT NOT NULL,
    partition_no  INTEGER NOT NULL,
    msg_offset    BIGINT NOT NULL,
    msg_key       BYTEA,
    msg_value     BYTEA,
    error         TEXT NOT NULL,
    received_at   TEXT NOT NULL,
    UNIQUE (topic, partition_no, msg_offset)
);
