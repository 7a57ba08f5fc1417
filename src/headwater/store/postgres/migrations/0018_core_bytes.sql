-- An event's packed core as bytes (issue 13, store size): from now on a core is written to the
-- new BYTEA column `core`, with `payload` empty; `payload` keeps the JSON of an event kept whole
-- (a generic event, an event with a facet that is no object). Cores written before keep the TEXT
-- form of migration 0015, `~` and the base64 of the same bytes, 590 bytes where the bytes are 442
-- (bench/ingest.py, 100,000 events), until `headwater db upgrade` moves them to `core`;
-- `core_bytes_seq` is how far it has come. Readers take `core` when it is set, else `payload`
-- (store/event_facets.py: `stored_core`). `packing_seq` (0015) is read no more: the same pass
-- packs the cores still kept as JSON text.
ALTER TABLE events ADD COLUMN core BYTEA;
INSERT INTO store_state (name, value) VALUES ('core_bytes_seq', 0);
