-- Packed JSON (issue 13, store/packing.py): a facet value written from now on is kept packed in
-- `packed` (a Zstandard frame made against a preset dictionary of OpenLineage's strings, behind a
-- format byte) with `value` empty; a value written before keeps its text in `value` and `packed`
-- NULL until `headwater db upgrade` packs it. An event's core (facet_count not NULL) is packed the
-- same way, kept in the TEXT `payload` as `~` and the base64 of those bytes; `packing_seq` is how
-- far the packing of the cores stored before has come.
ALTER TABLE event_facets ADD COLUMN packed BYTEA;
INSERT INTO store_state (name, value) VALUES ('packing_seq', 0);
