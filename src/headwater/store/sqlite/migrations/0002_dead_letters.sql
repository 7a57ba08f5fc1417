-- Dead letters: Kafka messages that could not become events (not JSON, invalid, too large), kept with
-- where they came from so that their offset can move on without losing them.
CREATE TABLE dead_letters (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    topic         TEXT NOT NULL,
    partition_no  INTEGER NOT NULL,
    msg_offset    INTEGER NOT NULL,
    msg_key       BLOB,
    msg_value     BLOB,
    error         TEXT NOT NULL,
    received_at   TEXT NOT NULL,
    UNIQUE (topic, partition_no, msg_offset)
);
