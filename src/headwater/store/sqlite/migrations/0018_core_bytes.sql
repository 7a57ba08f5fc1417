-- An event's packed core in its own column (issue 13, store size), as on PostgreSQL, so both
-- backends write and read events with the same SQL: from now on a core is written to the new
-- BLOB column `core`, with `payload` empty. SQLite's cores written since migration 0015 are a BLOB
-- in `payload` already, as small; they stay there, and readers take `core` when it is set, else
-- `payload` (store/event_facets.py: `stored_core`). `headwater db upgrade` moves to `core` only
-- the cores still kept as JSON text (written before 0015); `core_bytes_seq` is how far it has
-- come, and `packing_seq` (0015) is read no more.
ALTER TABLE events ADD COLUMN core BLOB;
INSERT INTO store_state (name, value) VALUES ('core_bytes_seq', 0);
