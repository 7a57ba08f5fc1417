"""Events a real producer sends, through the real openlineage-python client's HTTP transport: a
small shop (raw orders → cleaned orders with a nested schema, column lineage, owners and SQL → a
daily revenue report), a run of the report job that fails with an errorMessage facet, and, in
namespace `archive`, a snapshot table that a later job drops (lifecycleStateChange DROP)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    documentation_dataset,
    error_message_run,
    lifecycle_state_change_dataset,
    ownership_dataset,
    schema_dataset,
    sql_job,
)
from openlineage.client.transport.http import HttpConfig, HttpTransport
from openlineage.client.uuid import generate_new_uuid

PRODUCER = "https://github.com/example/headwater-tests/ui"
NAMESPACE = "shop"
RAW, CLEAN, REVENUE = "raw.orders", "analytics.orders_clean", "analytics.daily_revenue"
CLEAN_JOB, REPORT_JOB = "shop_etl.clean_orders", "shop_etl.daily_revenue"
ERROR = "Division by zero in revenue_per_customer"
ARCHIVE, SNAPSHOT = "archive", "archive.orders_2024"
START = datetime(2025, 3, 10, 6, 0, tzinfo=UTC)
DROPPED_AT = "2025-03-12T09:00:00Z"  # when the retire job's COMPLETE dropped the snapshot


def _schema(*fields: tuple[str, str]) -> schema_dataset.SchemaDatasetFacet:
    return schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in fields]
    )


def _column(source: str, field: str, kind: str, subtype: str) -> column_lineage_dataset.InputField:
    return column_lineage_dataset.InputField(
        namespace=NAMESPACE,
        name=source,
        field=field,
        transformations=[column_lineage_dataset.Transformation(type=kind, subtype=subtype)],
    )


def _clean_output() -> OutputDataset:
    address = schema_dataset.SchemaDatasetFacetFields(
        name="address",
        type="STRUCT",
        fields=[schema_dataset.SchemaDatasetFacetFields(name="city", type="VARCHAR")],
    )
    schema = _schema(("order_id", "BIGINT"), ("customer", "VARCHAR"), ("amount", "DECIMAL(12,2)"))
    schema.fields.append(address)
    lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            "order_id": column_lineage_dataset.Fields(inputFields=[_column(RAW, "id", "DIRECT", "IDENTITY")]),
            "amount": column_lineage_dataset.Fields(
                inputFields=[
                    _column(RAW, "amount_cents", "DIRECT", "TRANSFORMATION"),
                    _column(RAW, "status", "INDIRECT", "FILTER"),
                ]
            ),
            "customer": column_lineage_dataset.Fields(
                inputFields=[_column(RAW, "customer", "DIRECT", "IDENTITY")]
            ),
        }
    )
    return OutputDataset(
        namespace=NAMESPACE,
        name=CLEAN,
        facets={
            "schema": schema,
            "columnLineage": lineage,
            "documentation": documentation_dataset.DocumentationDatasetFacet(
                description="Orders without test orders, amounts in currency units."
            ),
            "ownership": ownership_dataset.OwnershipDatasetFacet(
                owners=[ownership_dataset.Owner(name="team:shop-data", type="TEAM")]
            ),
        },
    )


def _event(
    state: RunState,
    at: datetime,
    run: Run,
    job: Job,
    inputs: list[InputDataset],
    outputs: list[OutputDataset],
) -> RunEvent:
    return RunEvent(
        eventType=state,
        eventTime=at.isoformat(),
        run=run,
        job=job,
        producer=PRODUCER,
        inputs=inputs,
        outputs=outputs,
    )


def _events() -> list[RunEvent]:
    raw = InputDataset(
        namespace=NAMESPACE,
        name=RAW,
        facets={
            "schema": _schema(
                ("id", "BIGINT"), ("customer", "VARCHAR"), ("amount_cents", "BIGINT"), ("status", "VARCHAR")
            )
        },
    )
    clean_job = Job(
        namespace=NAMESPACE,
        name=CLEAN_JOB,
        facets={"sql": sql_job.SQLJobFacet(query="SELECT id AS order_id, customer FROM raw.orders")},
    )
    report_job = Job(namespace=NAMESPACE, name=REPORT_JOB)
    revenue = OutputDataset(
        namespace=NAMESPACE, name=REVENUE, facets={"schema": _schema(("day", "DATE"), ("revenue", "DECIMAL"))}
    )
    clean_input = InputDataset(namespace=NAMESPACE, name=CLEAN)
    events: list[RunEvent] = []
    for day in range(2):
        at = START + timedelta(days=day)
        clean_run, report_run = Run(runId=str(generate_new_uuid())), Run(runId=str(generate_new_uuid()))
        events += [
            _event(RunState.START, at, clean_run, clean_job, [raw], []),
            _event(
                RunState.COMPLETE, at + timedelta(minutes=4), clean_run, clean_job, [raw], [_clean_output()]
            ),
            _event(RunState.START, at + timedelta(minutes=5), report_run, report_job, [], []),
        ]
        end = at + timedelta(minutes=7)
        if day == 0:
            events.append(_event(RunState.COMPLETE, end, report_run, report_job, [clean_input], [revenue]))
        else:
            failed = Run(
                runId=report_run.runId,
                facets={
                    "errorMessage": error_message_run.ErrorMessageRunFacet(
                        message=ERROR,
                        programmingLanguage="PYTHON",
                        stackTrace="ZeroDivisionError: division by zero",
                    )
                },
            )
            events.append(_event(RunState.FAIL, end, failed, report_job, [clean_input], [revenue]))
    return events


def _archive_events() -> list[RunEvent]:
    """A job writes a snapshot table (CREATE); a later job drops it (DROP)."""
    events: list[RunEvent] = []
    for number, (job, state) in enumerate(
        (("archive.snapshot_orders", "CREATE"), ("archive.retire_snapshot", "DROP"))
    ):
        run, at = Run(runId=str(generate_new_uuid())), START + timedelta(days=1 + number, hours=3)
        change = lifecycle_state_change_dataset.LifecycleStateChange(state)
        facet = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(lifecycleStateChange=change)
        output = OutputDataset(namespace=ARCHIVE, name=SNAPSHOT, facets={"lifecycleStateChange": facet})
        events += [
            _event(RunState.START, at - timedelta(minutes=1), run, Job(namespace=ARCHIVE, name=job), [], []),
            _event(RunState.COMPLETE, at, run, Job(namespace=ARCHIVE, name=job), [], [output]),
        ]
    return events


def send_producer_events(url: str) -> int:
    """Send the shop's events to the Headwater at `url`; returns how many."""
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=url)))
    events = _events() + _archive_events()
    for event in events:
        client.emit(event)
    return len(events)
