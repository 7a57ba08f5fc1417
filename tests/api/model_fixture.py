"""A small lineage model written by hand into the model tables, as the pipeline would publish it.

    raw/orders (s3://lake) ──► etl.clean_orders ──► public.orders_clean ──► etl.clean_orders.report
    ──► public.report   (jobs and the other datasets in warehouse; the report job is a child job)

Runs: R1 and R2 of etl.clean_orders (both COMPLETED; R2 runs the newer version), R3 of the report
job (FAILED). raw/orders has a nested schema, a replaced documentation facet and a deleted
ownership facet; etl.clean_orders changed its sql facet between R1 and R2.
"""

from __future__ import annotations

from typing import Any

from headwater.store.base import EventStore

R1 = "11111111-1111-4111-8111-111111111111"
R2 = "22222222-2222-4222-8222-222222222222"
R3 = "33333333-3333-4333-8333-333333333333"

ORDERS = "dataset:s3://lake:raw/orders"
CLEAN = "dataset:warehouse:public.orders_clean"
REPORT = "dataset:warehouse:public.report"
ETL = "job:warehouse:etl.clean_orders"
REPORT_JOB = "job:warehouse:etl.clean_orders.report"


def t(text: str) -> str:
    """ "2024-01-01T00:00:00" → the stored fixed-width form "2024-01-01T00:00:00.0000000Z"."""
    head, _, fraction = text.partition(".")
    return f"{head}.{fraction.ljust(7, '0')}Z"


FACET_VALUES = {
    "h-schema-orders": '{"fields":[{"name":"id","type":"INTEGER"},{"name":"customer","type":"STRUCT",'
    '"fields":[{"name":"name","type":"STRING","description":"customer name"},'
    '{"name":"address","type":"STRUCT","fields":[{"name":"city","type":"STRING"}]}]}]}',
    "h-doc-old": '{"description":"orders, raw"}',
    "h-doc-orders": '{"description":"raw orders"}',
    "h-owner": '{"owners":[{"name":"team:data"}]}',
    "h-deleted": '{"_deleted":true}',
    "h-schema-clean": '{"fields":[{"name":"id","type":"INTEGER"},{"name":"total","type":"DECIMAL"}]}',
    "h-loc": '{"type":"git","url":"https://git.example/etl/clean_orders.py"}',
    "h-sql-1": '{"query":"SELECT 1"}',
    "h-sql-2": '{"query":"SELECT 2"}',
    "h-doc-job": '{"description":"cleans the orders"}',
    "h-jobtype-batch": '{"processingType":"BATCH","integration":"SPARK","jobType":"JOB"}',
    "h-jobtype-stream": '{"processingType":"STREAMING","integration":"FLINK","jobType":"JOB"}',
    "h-nominal": '{"nominalStartTime":"2024-01-01T01:00:00Z"}',
    "h-engine": '{"name":"spark","version":"3.5.1"}',
    "h-error": '{"message":"boom","programmingLanguage":"python"}',
}

ROWS: dict[str, list[tuple[Any, ...]]] = {
    "namespaces": [
        ("s3://lake", t("2024-01-01T00:00:00"), t("2024-01-02T00:00:00")),
        ("warehouse", t("2024-01-01T00:30:00"), t("2024-01-02T02:00:30")),
    ],
    "sources": [
        ("lake", "s3://lake", t("2024-01-01T00:00:00"), t("2024-01-01T00:00:00"), t("2024-01-01T00:00:00"), 1)
    ],
    "datasets": [
        (
            ORDERS,
            "s3://lake",
            "raw/orders",
            t("2024-01-01T00:00:00"),
            t("2024-01-02T00:00:00"),
            "lake",
            t("2024-01-01T00:00:00"),
            1,
            "dv-orders-1",
            t("2024-01-01T00:00:00"),
            1,
        ),
        (
            CLEAN,
            "warehouse",
            "public.orders_clean",
            t("2024-01-01T01:00:00"),
            t("2024-01-02T01:05:00.5"),
            None,
            None,
            None,
            "dv-clean-1",
            t("2024-01-02T01:05:00.5"),
            8,
        ),
        (
            REPORT,
            "warehouse",
            "public.report",
            t("2024-01-02T02:00:00"),
            t("2024-01-02T02:00:30"),
            None,
            None,
            None,
            "dv-report-1",
            t("2024-01-02T02:00:30"),
            10,
        ),
    ],
    "facet_values": list(FACET_VALUES.items()),
    "dataset_facets": [
        (ORDERS, "schema", t("2024-01-01T00:00:00"), 1, "h-schema-orders", 0),
        (ORDERS, "documentation", t("2024-01-01T00:00:00"), 1, "h-doc-old", 0),
        (ORDERS, "documentation", t("2024-01-02T00:00:00"), 5, "h-doc-orders", 0),
        (ORDERS, "ownership", t("2024-01-01T00:00:00"), 1, "h-owner", 0),
        (ORDERS, "ownership", t("2024-01-02T00:00:00"), 5, "h-deleted", 1),
        (CLEAN, "schema", t("2024-01-01T01:10:00"), 3, "h-schema-clean", 0),
    ],
    "job_facets": [
        (ETL, "sourceCodeLocation", t("2024-01-01T00:30:00"), 2, "h-loc", 0),
        (ETL, "sql", t("2024-01-01T00:30:00"), 2, "h-sql-1", 0),
        (ETL, "sql", t("2024-01-02T00:30:00"), 6, "h-sql-2", 0),
        (ETL, "documentation", t("2024-01-01T00:30:00"), 2, "h-doc-job", 0),
        (ETL, "jobType", t("2024-01-01T00:30:00"), 2, "h-jobtype-batch", 0),
        (REPORT_JOB, "jobType", t("2024-01-02T02:00:00"), 9, "h-jobtype-stream", 0),
    ],
    "schema_fields": [
        ("sh-orders", "id", 0, "INTEGER", None),
        ("sh-orders", "customer", 1, "STRUCT", None),
        ("sh-orders", "customer.name", 2, "STRING", "customer name"),
        ("sh-orders", "customer.address", 3, "STRUCT", None),
        ("sh-orders", "customer.address.city", 4, "STRING", None),
        ("sh-clean", "total", 1, "DECIMAL", None),
        ("sh-clean", "id", 0, "INTEGER", None),
    ],
    "dataset_versions": [
        ("dv-orders-1", ORDERS, "sh-orders", None, None, t("2024-01-01T00:00:00"), 1, R1),
        ("dv-clean-1", CLEAN, "sh-clean", None, "OVERWRITE", t("2024-01-01T01:10:00"), 3, R1),
        ("dv-report-1", REPORT, None, None, None, t("2024-01-02T02:00:30"), 10, R3),
    ],
    "dataset_version_runs": [
        ("dv-clean-1", R1, t("2024-01-01T01:10:00"), 3),
        ("dv-clean-1", R2, t("2024-01-02T01:05:00.5"), 8),
        ("dv-report-1", R3, t("2024-01-02T02:00:30"), 10),
    ],
    "jobs": [
        (
            ETL,
            "warehouse",
            "etl.clean_orders",
            t("2024-01-01T00:30:00"),
            t("2024-01-02T01:05:00.5"),
            "jv-clean-2",
            R2,
            t("2024-01-02T01:00:00"),
        ),
        (
            REPORT_JOB,
            "warehouse",
            "etl.clean_orders.report",
            t("2024-01-02T02:00:00"),
            t("2024-01-02T02:00:30"),
            "jv-report-1",
            R3,
            t("2024-01-02T02:00:00"),
        ),
    ],
    "job_parents": [(ETL, REPORT_JOB)],
    "job_versions": [
        (
            "jv-clean-1",
            ETL,
            "git https://git.example/etl/clean_orders.py",
            "SELECT 1",
            t("2024-01-01T01:00:00"),
            t("2024-01-01T01:10:00"),
            1,
        ),
        (
            "jv-clean-2",
            ETL,
            "git https://git.example/etl/clean_orders.py",
            "SELECT 2",
            t("2024-01-02T01:00:00"),
            t("2024-01-02T01:05:00.5"),
            1,
        ),
        ("jv-report-1", REPORT_JOB, None, None, t("2024-01-02T02:00:00"), t("2024-01-02T02:00:30"), 1),
    ],
    "job_version_io": [
        ("jv-clean-1", "output", CLEAN),
        ("jv-clean-2", "input", ORDERS),
        ("jv-clean-2", "output", CLEAN),
        ("jv-report-1", "input", CLEAN),
        ("jv-report-1", "output", REPORT),
    ],
    "runs": [
        (
            R1,
            ETL,
            "COMPLETED",
            t("2024-01-01T01:10:00"),
            t("2024-01-01T01:00:00"),
            t("2024-01-01T01:10:00"),
            600000,
            t("2024-01-01T01:00:00"),
            None,
            None,
            None,
            "jv-clean-1",
            t("2024-01-01T01:00:00"),
            t("2024-01-01T01:10:00"),
            2,
            3,
        ),
        (
            R2,
            ETL,
            "COMPLETED",
            t("2024-01-02T01:05:00.5"),
            t("2024-01-02T01:00:00"),
            t("2024-01-02T01:05:00.5"),
            300500,
            None,
            None,
            None,
            None,
            "jv-clean-2",
            t("2024-01-02T01:00:00"),
            t("2024-01-02T01:05:00.5"),
            2,
            8,
        ),
        (
            R3,
            REPORT_JOB,
            "FAILED",
            t("2024-01-02T02:00:30"),
            t("2024-01-02T02:00:00"),
            t("2024-01-02T02:00:30"),
            30000,
            None,
            None,
            R2,
            R2,
            "jv-report-1",
            t("2024-01-02T02:00:00"),
            t("2024-01-02T02:00:30"),
            2,
            10,
        ),
    ],
    "run_facets": [
        (R1, "nominalTime", "h-nominal", t("2024-01-01T01:00:00")),
        (R2, "processing_engine", "h-engine", t("2024-01-02T01:00:00")),
        (R3, "errorMessage", "h-error", t("2024-01-02T02:00:30")),
    ],
    "run_io": [
        (R1, "output", CLEAN),
        (R2, "input", ORDERS),
        (R2, "output", CLEAN),
        (R3, "input", CLEAN),
        (R3, "output", REPORT),
    ],
}


def fill_model(store: EventStore) -> None:
    """Write the model above with plain INSERTs in one transaction."""
    with store.transaction() as cur:
        for table, rows in ROWS.items():
            marks = ", ".join("?" * len(rows[0]))
            cur.executemany(store.sql(f"INSERT INTO {table} VALUES ({marks})"), rows)
