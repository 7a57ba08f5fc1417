-- A group commit in one round trip (issue 13, single POSTs on PostgreSQL). The writer used to
-- hold the append lock across seven round trips (BEGIN, the lock, the last seq, the sweep
-- counter, the facet values, the events, COMMIT), each of which waited for its thread to get
-- Python's GIL back from the server's event loop (bench/README.md): the other process waited
-- meanwhile. This function does the same work inside PostgreSQL, called as one statement of its
-- own transaction, so the lock is held only while PostgreSQL works.
--
-- Arguments: the lock's key; the facet-sweep counter the caller's remembered hashes belong to
-- (NULL: it remembers none, and sends every facet value); the facet values, a JSON array of
-- [hash, packed value as hex, reasons, deletable]; the events, a JSON array of rows of
-- events' columns (but seq, received_at and content_hash; the core as hex); `received`, the same
-- for all. JSON, not arrays: the client writes it in one call of compiled code, where psycopg
-- dumps an array element by element in Python (twice the CPU of the rest of an append). The
-- events are inserted in the order given, so seq follows it.
-- Returns the sweep counter and the eventIds stored by this call (duplicates are not), or no
-- eventIds (NULL) and nothing written when a sweep ran since `sweeps_seen`: some values the
-- caller left out may be gone, so it must send them all again.
CREATE FUNCTION headwater_append(
    lock_key BIGINT,
    sweeps_seen BIGINT,
    facets JSONB,
    events JSONB,
    received TEXT,
    OUT sweeps BIGINT,
    OUT stored TEXT[]
) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(lock_key);
    SELECT value INTO sweeps FROM store_state WHERE name = 'facet_sweeps';
    IF sweeps_seen IS NOT NULL AND sweeps_seen IS DISTINCT FROM sweeps THEN
        stored := NULL;
        RETURN;
    END IF;
    INSERT INTO event_facets (hash, value, packed, reasons, deletable)
        SELECT f ->> 0, '', decode(f ->> 1, 'hex'), f ->> 2, (f ->> 3)::SMALLINT
        FROM jsonb_array_elements(facets) AS f
        ON CONFLICT (hash) DO NOTHING;
    WITH inserted AS (
        INSERT INTO events (
            event_id, kind, run_id, parent_run_id, root_run_id, event_type, event_time,
            job_namespace, job_name, dataset_namespace, dataset_name, producer, received_at,
            payload, untrusted_facets, facet_count, core, content_hash
        )
        SELECT e ->> 0, e ->> 1, e ->> 2, e ->> 3, e ->> 4, e ->> 5, e ->> 6, e ->> 7, e ->> 8,
               e ->> 9, e ->> 10, e ->> 11, received, e ->> 12, e ->> 13, (e ->> 14)::INTEGER,
               decode(e ->> 15, 'hex'), ''
        FROM jsonb_array_elements(events) WITH ORDINALITY AS x (e, position)
        ORDER BY x.position
        ON CONFLICT (event_id) DO NOTHING
        RETURNING events.event_id
    )
    SELECT COALESCE(array_agg(inserted.event_id), '{}') INTO stored FROM inserted;
END
$$;
