-- Generic events (FastScore style) and what the browse API reads: elements by (type, description),
-- tags by (key, value), and the links between them. Written in the transaction that stores the
-- event, so a read right after the write sees it; `pipeline rebuild` never touches them, so their
-- ids stay the same. An event's id is its seq in the event store.
CREATE TABLE generic_events (
    id           INTEGER PRIMARY KEY REFERENCES events (seq),
    type         TEXT NOT NULL,
    description  TEXT NOT NULL,
    received_at  TEXT NOT NULL
);
CREATE INDEX generic_events_by_type ON generic_events (type, id);
CREATE INDEX generic_events_by_time ON generic_events (received_at, id);
CREATE TABLE generic_elements (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    type         TEXT NOT NULL,
    description  TEXT NOT NULL,
    UNIQUE (type, description)
);
CREATE TABLE generic_tags (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    UNIQUE (key, value)
);
CREATE TABLE generic_event_elements (
    event_id    INTEGER NOT NULL,
    element_id  INTEGER NOT NULL,
    position    INTEGER NOT NULL,
    PRIMARY KEY (event_id, element_id)
);
CREATE INDEX generic_event_elements_by_element ON generic_event_elements (element_id, event_id);
CREATE TABLE generic_event_tags (
    event_id  INTEGER NOT NULL,
    tag_id    INTEGER NOT NULL,
    PRIMARY KEY (event_id, tag_id)
);
CREATE INDEX generic_event_tags_by_tag ON generic_event_tags (tag_id, event_id);
-- the tags an element carries in one event
CREATE TABLE generic_element_tags (
    event_id    INTEGER NOT NULL,
    element_id  INTEGER NOT NULL,
    tag_id      INTEGER NOT NULL,
    PRIMARY KEY (event_id, element_id, tag_id)
);
CREATE INDEX generic_element_tags_by_tag ON generic_element_tags (tag_id, event_id, element_id);
-- the latest value of each key on an element, by receive order (kept on write: reads stay O(keys))
CREATE TABLE generic_element_latest_tags (
    element_id  INTEGER NOT NULL,
    key         TEXT NOT NULL,
    tag_id      INTEGER NOT NULL,
    event_id    INTEGER NOT NULL,
    PRIMARY KEY (element_id, key)
);
CREATE INDEX events_generic_by_kind ON events (kind, seq) WHERE kind = 'generic';
