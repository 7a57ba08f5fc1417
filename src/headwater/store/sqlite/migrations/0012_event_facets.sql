-- Content-addressed facets (issue 13): each distinct facet value of the events is kept once, by
-- the hash of its canonical JSON (sorted keys), with the verdict of its validation (`reasons`, a
-- JSON array; NULL when the facet is fine) for the kind of facet it was first seen as
-- (`deletable`: 1 for job and dataset facets, which may carry `_deleted`).
CREATE TABLE event_facets (
    hash      TEXT PRIMARY KEY,
    value     TEXT NOT NULL,
    reasons   TEXT,
    deletable SMALLINT NOT NULL
);
-- An event row whose facet_count is not NULL keeps in `payload` the event's core: every facet
-- value replaced by its hash (a string), facet_count of them. NULL: the payload is whole (rows
-- stored before this migration until they are converted, generic events, and the rare event
-- whose facets are not all objects).
ALTER TABLE events ADD COLUMN facet_count INTEGER;
-- Counters of the store: `facet_sweeps` grows with each sweep of unreferenced facet values (a
-- writer that remembers hashes it wrote forgets them when it changed); `facet_conversion_seq` is
-- how far the conversion of whole payloads has come.
CREATE TABLE store_state (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO store_state (name, value) VALUES ('facet_sweeps', 0);
INSERT INTO store_state (name, value) VALUES ('facet_conversion_seq', 0);
