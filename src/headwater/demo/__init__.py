"""Demo data: a deterministic, realistic OpenLineage lineage for demos, end-to-end tests and benchmarks.

`headwater.demo.lineage` builds layered pipelines (ingest → staging → marts → reports) run by Spark,
dbt and Airflow style producers, with parent runs, column lineage, symlinked datasets, schema and
code changes, static metadata events and the delivery faults of a real network (late and duplicate
events). `demo_events()` gives a small complete history; `stream_events(n)` a lazy one of any size.
"""
