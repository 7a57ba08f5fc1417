-- OpenLineage datasets and jobs as elements of the browse API (`/lineage/1/elements?element_type=dataset`):
-- a row of generic_elements each, type `dataset` or `job`, description `{namespace}:{name}` (its node
-- id without the kind), numbered on first sight by the pipeline's publish and never removed, so the
-- ids share one sequence with generic elements and survive `pipeline rebuild`. This numbers what was
-- published before the migration.
INSERT INTO generic_elements (type, description)
SELECT DISTINCT 'dataset', namespace || ':' || name FROM datasets WHERE true ORDER BY 2
ON CONFLICT (type, description) DO NOTHING;
INSERT INTO generic_elements (type, description)
SELECT DISTINCT 'job', namespace || ':' || name FROM jobs WHERE true ORDER BY 2
ON CONFLICT (type, description) DO NOTHING;
