"""The nodes of the demo graph: job namespaces, datasets, jobs, how a job reads a dataset, and the
column lineage (which input fields each output field uses) a job's output carries."""

from __future__ import annotations

from dataclasses import dataclass, field

from headwater.demo.scenario import Column, Integration

Ref = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class Namespace:
    name: str
    integration: Integration
    orchestrator: str  # the orchestrator job's name
    project: str  # dbt project / Spark application / DAG id used in task names


@dataclass(eq=False)
class Dataset:
    idx: int
    namespace: str
    name: str
    layer: str  # source, raw, rejects, staging, mart, report, export
    domain: str  # domain instance name
    entity: bool
    columns: list[Column]
    base_rows: int
    columns_v2: list[Column] | None = None  # schema from the change day on
    alias: Ref | None = None  # the Hive table name of a lake dataset (symlinked from the change day)
    versioned: bool = False  # carries the datasetVersion facet when written
    lifecycle: str | None = None  # CREATE (first write) or OVERWRITE (every write)

    @property
    def ref(self) -> Ref:
        return (self.namespace, self.name)

    def schema(self, v2: bool) -> list[Column]:
        return self.columns_v2 if v2 and self.columns_v2 is not None else self.columns


@dataclass(frozen=True, eq=False)
class Read:
    dataset: Dataset
    via_alias: bool = False  # read under its Hive table name

    @property
    def ref(self) -> Ref:
        if self.via_alias and self.dataset.alias is not None:
            return self.dataset.alias
        return self.dataset.ref


@dataclass(frozen=True)
class Use:
    """One input field an output field (or the whole output) depends on."""

    ref: Ref
    field: str
    type: str  # DIRECT | INDIRECT
    subtype: str
    description: str
    masking: bool = False


@dataclass
class Derived:
    columns: list[Column] = field(default_factory=list)
    fields: dict[str, list[Use]] = field(default_factory=dict)
    dataset: list[Use] = field(default_factory=list)

    def add(self, column: Column, uses: list[Use]) -> None:
        name, n = column.name, 2
        taken = {c.name for c in self.columns}
        while name in taken:
            name, n = f"{column.name}_{n}", n + 1
        if name != column.name:
            column = Column(name, column.type, column.role, column.fields, column.description)
        self.columns.append(column)
        if uses:
            self.fields[name] = uses


@dataclass(eq=False)
class Job:
    idx: int
    ns: Namespace
    name: str
    layer: str  # orchestrator, ingest, staging, marts, reports, reconcile, static
    job_type: str
    description: str
    inputs: list[Read] = field(default_factory=list)
    outputs: list[Dataset] = field(default_factory=list)
    lineage: dict[int, tuple[Derived, Derived]] = field(default_factory=dict)  # by output: (v1, v2)
    deprecated_lineage: set[int] = field(default_factory=set)
    code_path: str = ""
    sha: tuple[str, str] = ("", "")
    code_change: bool = False
    dialect: str | None = None  # SQL jobs: the sql facet's dialect
    owners: tuple[str, ...] = ()
    documented: bool = True
    duration: tuple[int, int] = (30_000, 300_000)  # ms
    quality_checks: bool = False  # dataQualityMetrics on the primary input when complete

    @property
    def ref(self) -> Ref:
        return (self.ns.name, self.name)

    @property
    def producer(self) -> str:
        return self.ns.integration.producer


def first_column(columns: list[Column], *roles: str) -> Column | None:
    return next((c for c in columns if c.role in roles), None)
