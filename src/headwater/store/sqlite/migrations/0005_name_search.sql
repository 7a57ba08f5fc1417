-- Search by any part of a name (GET /api/v1/search) without scanning every name: trigram
-- full-text indexes over datasets.name and jobs.name, kept by triggers. They read the names from
-- the tables themselves (external content), so each name is stored once.
CREATE VIRTUAL TABLE dataset_names USING fts5(name, content='datasets', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER dataset_names_insert AFTER INSERT ON datasets BEGIN
    INSERT INTO dataset_names (rowid, name) VALUES (new.rowid, new.name);
END;
CREATE TRIGGER dataset_names_delete AFTER DELETE ON datasets BEGIN
    INSERT INTO dataset_names (dataset_names, rowid, name) VALUES ('delete', old.rowid, old.name);
END;
CREATE TRIGGER dataset_names_update AFTER UPDATE OF name ON datasets BEGIN
    INSERT INTO dataset_names (dataset_names, rowid, name) VALUES ('delete', old.rowid, old.name);
    INSERT INTO dataset_names (rowid, name) VALUES (new.rowid, new.name);
END;
INSERT INTO dataset_names (dataset_names) VALUES ('rebuild');
CREATE VIRTUAL TABLE job_names USING fts5(name, content='jobs', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER job_names_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_names (rowid, name) VALUES (new.rowid, new.name);
END;
CREATE TRIGGER job_names_delete AFTER DELETE ON jobs BEGIN
    INSERT INTO job_names (job_names, rowid, name) VALUES ('delete', old.rowid, old.name);
END;
CREATE TRIGGER job_names_update AFTER UPDATE OF name ON jobs BEGIN
    INSERT INTO job_names (job_names, rowid, name) VALUES ('delete', old.rowid, old.name);
    INSERT INTO job_names (rowid, name) VALUES (new.rowid, new.name);
END;
INSERT INTO job_names (job_names) VALUES ('rebuild');
-- A search that matches many names walks them in the order asked instead, ties included (see
-- store/catalog_sql.py): by name, or newest update first.
CREATE INDEX datasets_by_name ON datasets (name, namespace);
CREATE INDEX jobs_by_name ON jobs (name, namespace);
CREATE INDEX datasets_by_update ON datasets (updated_at DESC, name, namespace);
CREATE INDEX jobs_by_update ON jobs (updated_at DESC, name, namespace);
