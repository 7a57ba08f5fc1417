-- Generic events (FastScore style) and what the browse API reads: elements by (type, description),
-- tags by (key, value), and the links between them. Written in the transaction that stores the
-- event, so a read right after the write sees it; `pipeline rebuild` never touches them, so their
-- ids stay the same. An event's id is its seq in the event store.
CREATE TABLE generic_events (
    id           BIGINT PRIMARY KEY REFERENCES events (seq),
    type         TEXT COLLATE "C" NOT NULL,
    description  TEXT COLLATE "C" NOT NULL,
    received_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX generic_events_by_type ON generic_events (type, id);
CREATE INDEX generic_events_by_time ON generic_events (received_at, id);
CREATE TABLE generic_elements (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type         TEXT COLLATE "C" NOT NULL,
    description  TEXT COLLATE "C" NOT NULL,
    UNIQUE (type, description)
);
CREATE TABLE generic_tags (
    id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key    TEXT COLLATE "C" NOT NULL,
    value  TEXT COLLATE "C" NOT NULL,
    UNIQUE (key, value)
);
CREATE TABLE generic_event_elements (
    event_id    BIGINT NOT NULL,
    element_id  BIGINT NOT NULL,
    position    INTEGER NOT NULL,
    PRIMARY KEY (event_id, element_id)
);
CREATE INDEX generic_event_elements_by_element ON generic_event_elements (element_id, event_id);
CREATE TABLE generic_event_tags (
    event_id  BIGINT NOT NULL,
    tag_id    BIGINT NOT NULL,
    PRIMARY KEY (event_id, tag_id)
);
CREATE INDEX generic_event_tags_by_tag ON generic_event_tags (tag_id, event_id);
-- the tags an element carries in one event
CREATE TABLE generic_element_tags (
    event_id    BIGINT NOT NULL,
    element_id  BIGINT NOT NULL,
    tag_id      BIGINT NOT NULL,
    PRIMARY KEY (event_id, element_id, tag_id)
);
CREATE INDEX generic_element_tags_by_tag ON generic_element_tags (tag_id, event_id, element_id);
-- the latest value of each key on an element, by receive order (kept on write: reads stay O(keys))
CREATE TABLE generic_element_latest_tags (
    element_id  BIGINT NOT NULL,
    key         TEXT COLLATE "C" NOT NULL,
    tag_id      BIGINT NOT NULL,
    event_id    BIGINT NOT NULL,
    PRIMARY KEY (element_id, key)
);
CREATE INDEX events_generic_by_kind ON events (kind, seq) WHERE kind = 'generic';
