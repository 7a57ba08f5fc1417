-- Search by any part of a name (GET /api/v1/search) without scanning every name: trigram GIN
-- indexes on the lower-cased names (pg_trgm, shipped with PostgreSQL's contrib modules). Where
-- the extension cannot be created, search still works, by scanning.
-- pg_trgm splits words at anything but letters and digits, so `.`, `_`, `-` and `/` become
-- capitals first (a lower-cased name has none): `r_0` is then one trigram, not two words of one
-- character that half the names hold. store/catalog_sql.py (_NAME_KEY) writes the same expression.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm is not available (%): name search will scan', SQLERRM;
END $$;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        CREATE INDEX datasets_name_trigrams ON datasets USING gin ((
            replace(replace(replace(replace(LOWER(name), '.', 'D'), '_', 'U'), '-', 'H'), '/', 'S')
        ) gin_trgm_ops);
        CREATE INDEX jobs_name_trigrams ON jobs USING gin ((
            replace(replace(replace(replace(LOWER(name), '.', 'D'), '_', 'U'), '-', 'H'), '/', 'S')
        ) gin_trgm_ops);
    END IF;
END $$;
-- A search that matches many names reads them in the order asked, up to a bound, instead of
-- sorting them all (see store/catalog_sql.py): by name, or newest update first, ties included.
CREATE INDEX datasets_by_name ON datasets (name, namespace);
CREATE INDEX jobs_by_name ON jobs (name, namespace);
CREATE INDEX datasets_by_update ON datasets (updated_at DESC, name, namespace);
CREATE INDEX jobs_by_update ON jobs (updated_at DESC, name, namespace);
