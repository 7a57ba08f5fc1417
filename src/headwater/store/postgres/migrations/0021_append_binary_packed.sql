-- `headwater_append` (0019) takes the packed bytes apart from the JSON (issue 13, PostgreSQL
-- ingest). It read each event's packed core, and each new facet value, as hex inside the JSON
-- rows: a core's hex was about two thirds of a row, and PostgreSQL's JSON parser builds strings a
-- character at a time, so parsing the rows took a fifth of the backend's CPU for an append
-- (perf, bench/ingest_split.py). The packed bytes now come as a `bytea[]` in binary, in the
-- rows' order, and the JSON keeps the short columns.
--
-- Arguments as in 0019, but: `facets` rows are [hash, reasons, deletable] and `facet_values`
-- their packed values in the same order; `events` rows end at facet_count, and `cores` holds
-- their packed cores (NULL for an event kept whole in `payload`) in the same order.
DROP FUNCTION headwater_append(BIGINT, BIGINT, JSONB, JSONB, TEXT);
CREATE FUNCTION headwater_append(
    lock_key BIGINT,
    sweeps_seen BIGINT,
    facets JSONB,
    facet_values BYTEA[],
    events JSONB,
    cores BYTEA[],
    received TEXT,
    OUT sweeps BIGINT,
    OUT stored TEXT[]
) LANGUAGE plpgsql AS $$
DECLARE
    -- the events in the order given, so seq follows it; %s: what to do with a stored eventId
    insert_events CONSTANT TEXT := $sql$
        WITH inserted AS (
            INSERT INTO events (
                event_id, kind, run_id, parent_run_id, root_run_id, event_type, event_time,
                job_namespace, job_name, dataset_namespace, dataset_name, producer, received_at,
                payload, untrusted_facets, facet_count, core, content_hash
            )
            SELECT e ->> 0, e ->> 1, e ->> 2, e ->> 3, e ->> 4, e ->> 5, e ->> 6, e ->> 7, e ->> 8,
                   e ->> 9, e ->> 10, e ->> 11, $3, e ->> 12, e ->> 13, (e ->> 14)::INTEGER, c, ''
            FROM ROWS FROM (jsonb_array_elements($1), unnest($2)) WITH ORDINALITY
                AS x (e, c, position)
            ORDER BY x.position
            %s
            RETURNING events.event_id
        )
        SELECT COALESCE(array_agg(inserted.event_id), '{}') FROM inserted
    $sql$;
BEGIN
    PERFORM pg_advisory_xact_lock(lock_key);
    SELECT value INTO sweeps FROM store_state WHERE name = 'facet_sweeps';
    IF sweeps_seen IS NOT NULL AND sweeps_seen IS DISTINCT FROM sweeps THEN
        stored := NULL;
        RETURN;
    END IF;
    INSERT INTO event_facets (hash, value, packed, reasons, deletable)
        SELECT f ->> 0, '', v, f ->> 1, (f ->> 2)::SMALLINT
        FROM ROWS FROM (jsonb_array_elements(facets), unnest(facet_values)) AS x (f, v)
        ON CONFLICT (hash) DO NOTHING;
    -- Events sent again are rare (redeliveries): insert plainly first, which spares a probe of
    -- the eventId index per row before its insert (a tenth of the backend's time, perf); only
    -- when one was stored before is the batch inserted again, skipping those.
    BEGIN
        EXECUTE format(insert_events, '') INTO stored USING events, cores, received;
    EXCEPTION WHEN unique_violation THEN
        EXECUTE format(insert_events, 'ON CONFLICT (event_id) DO NOTHING') INTO stored
            USING events, cores, received;
    END;
END
$$;
