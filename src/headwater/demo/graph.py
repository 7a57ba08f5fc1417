"""The graph of one demo lineage: its job namespaces, the layered task jobs (ingest, staging, marts,
reports, the reconcile cycle) and the datasets they read and write, built from (namespaces, jobs,
seed) alone; also the schema and code changes of the change day."""

from __future__ import annotations

import random

from headwater.demo.column_lineage import (
    derive_mart,
    derive_raw,
    derive_reconcile,
    derive_report,
    derive_staging,
)
from headwater.demo.nodes import Dataset, Derived, Job, Namespace, Read, Ref, Use, first_column
from headwater.demo.scenario import (
    BIGQUERY,
    DOMAINS,
    HIVE,
    INTEGRATIONS,
    LAKE,
    PEOPLE,
    PERIODS,
    REGIONS,
    TEAMS,
    WAREHOUSE,
    Column,
    Domain,
)

_KINDS = ("spark", "dbt", "airflow")  # the integration of namespace i is _KINDS[i % 3]


def _domain_instance(i: int) -> tuple[Domain, str]:
    """The i-th domain and its unique name (orders, customers, ..., orders_eu, ..., orders_r7)."""
    domain = DOMAINS[i % len(DOMAINS)]
    k = i // len(DOMAINS)
    if k == 0:
        return domain, domain.name
    suffix = REGIONS[k - 1] if k <= len(REGIONS) else f"r{k}"
    return domain, f"{domain.name}_{suffix}"


def _namespace(i: int) -> Namespace:
    integration = INTEGRATIONS[_KINDS[i % 3]]
    n = i // 3 + 1
    dash, under = ("", "") if n == 1 else (f"-{n}", f"_{n}")
    if integration.kind == "spark":
        project = f"lake_etl{under}"
        orchestrator = project
    elif integration.kind == "dbt":
        project = f"analytics{under}"
        orchestrator = f"dbt-run-analytics{under}"
    else:
        project = f"daily_pipeline{under}"
        orchestrator = project
    return Namespace(integration.stem + dash, integration, orchestrator, project)


def _partners(primary: Dataset, pool: list[Dataset], start: int, count: int) -> list[Dataset]:
    """Up to `count` datasets of `pool` to join to `primary`: first those sharing a key with it,
    looking from `start` on, then any other."""
    keys = {c.name for c in primary.columns if c.role in ("key", "fk")}
    rotation = [pool[(start + i) % len(pool)] for i in range(len(pool))]
    candidates = [d for d in rotation if d is not primary]
    sharing = [d for d in candidates if any(c.name in keys for c in d.columns if c.role in ("key", "fk"))]
    chosen = list(dict.fromkeys([*sharing, *candidates]))
    return chosen[:count]


def _layer_sizes(jobs: int) -> tuple[int, int, int, int]:
    """(ingest, staging, marts, reports) task counts; one more job is the reconcile (cycle) task."""
    rest = jobs - 1
    ingest = max(2, round(rest * 0.3))
    staging = max(2, round(rest * 0.3))
    reports = max(1, round(rest * 0.15))
    marts = rest - ingest - staging - reports
    return ingest, staging, marts, reports


class Graph:
    """Datasets and jobs of one demo lineage, built from (namespaces, jobs, seed) alone."""

    def __init__(self, namespaces: int, jobs: int, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(f"headwater-demo:graph:{seed}:{namespaces}:{jobs}")
        self.namespaces = [_namespace(i) for i in range(namespaces)]
        self.root_ns = self.namespaces[2]
        self.datasets: list[Dataset] = []
        self.jobs: list[Job] = []  # every job, orchestrators and the static-only one included
        self._dataset_names: set[Ref] = set()
        self._job_names: set[Ref] = set()
        self._turn: dict[str, int] = {}
        self._lineage_outputs = 0

        self.orchestrators = [self._orchestrator(ns) for ns in self.namespaces]
        n_ingest, n_staging, n_marts, n_reports = _layer_sizes(jobs)
        self.sources: list[Dataset] = []
        self.raws: list[Dataset] = []
        ingest = [self._ingest(i) for i in range(n_ingest)]
        staging_kinds = ["spark" if j % 3 == 1 else "dbt" for j in range(n_staging)]
        self._link_lake_tables(staging_kinds)
        self.stagings: list[Dataset] = []
        staging = [self._staging(j, kind) for j, kind in enumerate(staging_kinds)]
        self.marts: list[Dataset] = []
        marts = [self._mart(k) for k in range(n_marts)]
        self.reports: list[Dataset] = []
        reports = [self._report(k) for k in range(n_reports)]
        self.cycle_job = self._reconcile()
        self.layers: list[list[Job]] = [ingest, staging, marts, [*reports, self.cycle_job]]
        self.tasks = [job for layer in self.layers for job in layer]
        self.static_job = self._static_job()
        self.schema_changes = self._schema_changes()
        for job in self.tasks:
            if job.idx % 5 == 3:
                job.code_change = True
        empty = [ns.name for ns in self.namespaces if not any(job.ns is ns for job in self.tasks)]
        if empty:
            raise ValueError(f"{jobs} jobs leave namespace(s) {', '.join(empty)} without tasks: use fewer")

    def writer(self, ds: Dataset) -> Job:
        """The job that creates `ds` (the cycle job only writes into a table another job creates)."""
        return next(job for job in self.tasks if job.outputs[:1] == [ds] and job.layer != "reconcile")

    def deepest_path(self) -> tuple[Ref, ...]:
        """source → raw → staging → mart → report, each read under the name it was written as."""
        for report_job in self.layers[3]:
            for mart in report_job.inputs:
                for staging in self.writer(mart.dataset).inputs:
                    for raw in self.writer(staging.dataset).inputs:
                        if raw.ref == raw.dataset.ref:
                            source = self.writer(raw.dataset).inputs[0]
                            return (source.ref, raw.ref, staging.ref, mart.ref, report_job.outputs[0].ref)
        raise AssertionError("the layered graph always has a path through storage names")

    # -- naming -----------------------------------------------------------------------------------

    @staticmethod
    def _unique(taken: set[Ref], namespace: str, name: str) -> str:
        candidate, n = name, 2
        while (namespace, candidate) in taken:
            candidate, n = f"{name}_{n}", n + 1
        taken.add((namespace, candidate))
        return candidate

    def _pick(self, kind: str) -> Namespace:
        pool = [ns for ns in self.namespaces if ns.integration.kind == kind]
        turn = self._turn.get(kind, 0)
        self._turn[kind] = turn + 1
        return pool[turn % len(pool)]

    def _sha(self) -> str:
        return f"{self.rng.getrandbits(160):040x}"

    # -- building blocks --------------------------------------------------------------------------

    def _dataset(self, namespace: str, name: str, layer: str, domain: str, columns: list[Column]) -> Dataset:
        ds = Dataset(
            idx=len(self.datasets),
            namespace=namespace,
            name=self._unique(self._dataset_names, namespace, name),
            layer=layer,
            domain=domain,
            entity=False,
            columns=columns,
            base_rows=0,
        )
        self.datasets.append(ds)
        return ds

    def _job(self, ns: Namespace, name: str, layer: str, description: str, code_path: str) -> Job:
        integration = ns.integration
        job_type = integration.orchestrator_type if layer == "orchestrator" else integration.task_type
        owners = [TEAMS[integration.kind]]
        if self.rng.random() < 0.4:
            owners.append(self.rng.choice(PEOPLE))
        job = Job(
            idx=len(self.jobs),
            ns=ns,
            name=self._unique(self._job_names, ns.name, name),
            layer=layer,
            job_type=job_type,
            description=description,
            code_path=code_path,
            sha=(self._sha(), self._sha()),
            owners=tuple(owners) if layer == "orchestrator" or self.rng.random() < 0.6 else (),
            documented=layer == "orchestrator" or self.rng.random() < 0.7,
        )
        self.jobs.append(job)
        return job

    def _attach(self, job: Job, output: Dataset, derived: Derived, *, lineage: bool = True) -> None:
        """Make `output` an output of `job`, with the schema and (optionally) column lineage derived."""
        index = len(job.outputs)
        job.outputs.append(output)
        if lineage:
            job.lineage[index] = (derived, derived)
            if self._lineage_outputs % 4 == 1:
                job.deprecated_lineage.add(index)
            self._lineage_outputs += 1

    def _orchestrator(self, ns: Namespace) -> Job:
        kind = ns.integration.kind
        if kind == "spark":
            text = f"Spark application `{ns.project}`: lands source tables and topics in the lake."
            path = f"spark/apps/{ns.project}/main.py"
        elif kind == "dbt":
            text = f"`dbt build` of the `{ns.project}` project: staging models and marts."
            path = f"dbt/{ns.project}/dbt_project.yml"
        else:
            text = f"Airflow DAG `{ns.project}`: the daily run of the data platform, 02:00 UTC."
            path = f"airflow/dags/{ns.project}.py"
        return self._job(ns, ns.orchestrator, "orchestrator", text, path)

    def _ingest(self, i: int) -> Job:
        domain, instance = _domain_instance(i)
        source = self._dataset(
            domain.namespace, domain.table.format(instance), "source", instance, list(domain.columns)
        )
        source.entity = domain.entity
        source.base_rows = self.rng.randint(20_000, 5_000_000)
        self.sources.append(source)
        ns = self._pick("spark")
        job = self._job(
            ns,
            f"{ns.project}.ingest_{instance}",
            "ingest",
            f"Copies `{source.name}` ({source.namespace}) into the lake as `raw/{instance}`.",
            f"spark/apps/{ns.project}/ingest_{domain.name}.py",
        )
        job.duration = (120_000, 900_000)
        read = Read(source)
        job.inputs.append(read)
        derived = derive_raw(read)
        raw = self._dataset(LAKE, f"raw/{instance}", "raw", instance, derived.columns)
        raw.entity, raw.base_rows, raw.versioned = domain.entity, source.base_rows, True
        self.raws.append(raw)
        self._attach(job, raw, derived)
        if i % 4 == 1:  # rows failing validation go to a quarantine table: a job with two outputs
            rejects = self._dataset(
                LAKE,
                f"raw/_rejects/{instance}",
                "rejects",
                instance,
                [*derived.columns, Column("_error", "STRING", "meta")],
            )
            rejects.base_rows = max(1, source.base_rows // 2000)
            self._attach(job, rejects, derived, lineage=False)
        return job

    def _link_lake_tables(self, staging_kinds: list[str]) -> None:
        """The raw datasets dbt reads under their Hive table names (a few; never the first)."""
        chosen: list[Dataset] = []
        cap = max(3, len(self.raws) // 10)
        for j, kind in enumerate(staging_kinds):
            raw = self.raws[j % len(self.raws)]
            if kind == "dbt" and raw is not self.raws[0] and raw not in chosen and len(chosen) < cap:
                chosen.append(raw)
        for raw in chosen:
            raw.alias = (HIVE, self._unique(self._dataset_names, HIVE, f"raw.{raw.domain}"))

    def _staging(self, j: int, kind: str) -> Job:
        raws = self.raws
        primary = raws[j % len(raws)]
        second = _partners(primary, raws, j + len(raws) // 2, 1)[0] if j % 3 == 2 else None
        ns = self._pick(kind)
        via_alias = kind == "dbt"
        p = Read(primary, via_alias)
        q = Read(second, via_alias) if second is not None else None
        derived = derive_staging(p, q)
        model = f"stg_{primary.domain}"
        if kind == "dbt":
            output = self._dataset(BIGQUERY, f"acme-analytics.staging.{model}", "staging", primary.domain, [])
            name = f"{ns.project}.staging.{model}"
            path = f"dbt/{ns.project}/models/staging/{model}.sql"
        else:
            output = self._dataset(WAREHOUSE, f"warehouse.staging.{model}", "staging", primary.domain, [])
            name = f"{ns.project}.stage_{primary.domain}"
            path = f"spark/apps/{ns.project}/stage_{primary.domain}.py"
        output.columns, output.entity, output.base_rows = derived.columns, primary.entity, primary.base_rows
        job = self._job(ns, name, "staging", f"Cleans and types `{p.ref[1]}`; hashes personal data.", path)
        job.inputs.append(p)
        if q is not None:
            job.inputs.append(q)
        job.dialect = "bigquery" if kind == "dbt" else None
        job.quality_checks = j % 2 == 0
        job.duration = (30_000, 240_000)
        self.stagings.append(output)
        self._attach(job, output, derived)
        return job

    def _mart(self, k: int) -> Job:
        stagings = self.stagings
        primary = stagings[k % len(stagings)]
        others = _partners(primary, stagings, k + 1, 2 if k % 3 == 0 else 1)
        p = Read(primary)
        qs = [Read(d) for d in others]
        derived = derive_mart(p, qs, with_dataset_deps=k % 2 == 0)
        model = f"{'dim' if primary.entity else 'fct'}_{primary.domain}"
        ns = self._pick("dbt")
        output = self._dataset(
            BIGQUERY, f"acme-analytics.marts.{model}", "mart", primary.domain, derived.columns
        )
        output.entity, output.lifecycle = primary.entity, "CREATE"
        output.base_rows = primary.base_rows if not primary.entity else max(1, primary.base_rows // 3)
        kind_text = "Dimension" if primary.entity else "Fact table"
        joined = ", ".join(d.domain for d in others) or "nothing"
        job = self._job(
            ns,
            f"{ns.project}.marts.{model}",
            "marts",
            f"{kind_text} of {primary.domain}, joined with {joined}.",
            f"dbt/{ns.project}/models/marts/{model}.sql",
        )
        job.inputs.extend([p, *qs])
        job.dialect = "bigquery"
        job.duration = (60_000, 480_000)
        self.marts.append(output)
        self._attach(job, output, derived)
        return job

    def _report(self, k: int) -> Job:
        marts = self.marts
        primary = marts[k % len(marts)]
        other = _partners(primary, marts, k + 1, 1)[0] if k % 2 == 0 and len(marts) > 1 else None
        period, unit = PERIODS[k % len(PERIODS)]
        m = Read(primary)
        o = Read(other) if other is not None else None
        derived = derive_report(m, o, unit, with_dataset_deps=k % 2 == 1)
        report = f"rpt_{primary.domain}_{period}"
        if k % 3 == 2:
            output = self._dataset(LAKE, f"exports/{report}", "export", primary.domain, derived.columns)
        else:
            output = self._dataset(WAREHOUSE, f"warehouse.reporting.{report}", "report", primary.domain, [])
            output.columns = derived.columns
        output.lifecycle, output.base_rows = "OVERWRITE", self.rng.randint(30, 5_000)
        ns = self._pick("airflow")
        job = self._job(
            ns,
            f"{ns.project}.{report}",
            "reports",
            f"{period.capitalize()} {primary.domain} report for the BI dashboards.",
            f"airflow/dags/{ns.project}.py",
        )
        job.inputs.append(m)
        if o is not None:
            job.inputs.append(o)
        job.dialect = "postgres"
        job.duration = (20_000, 120_000)
        self.reports.append(output)
        self._attach(job, output, derived)
        return job

    def _reconcile(self) -> Job:
        """The cycle: reads the first mart, writes the staging table that mart is built from."""
        mart = self.marts[0]
        target = self.stagings[0]
        ns = self.root_ns
        job = self._job(
            ns,
            f"{ns.project}.reconcile_{target.domain}",
            "reconcile",
            f"Writes late corrections found in `{mart.name}` back into `{target.name}` "
            "(read by the next run of the mart: a cycle).",
            f"airflow/dags/{ns.project}.py",
        )
        m = Read(mart)
        job.inputs.append(m)
        job.dialect = "bigquery"
        job.duration = (20_000, 90_000)
        self._attach(job, target, derive_reconcile(m, target.columns))
        return job

    def _static_job(self) -> Job:
        """A job declared by a JobEvent only: it never runs."""
        ns = self.root_ns
        job = self._job(
            ns,
            f"{ns.project}.export_partner_feed",
            "static",
            "Planned: a nightly feed of the first report for a partner (not scheduled yet).",
            f"airflow/dags/{ns.project}.py",
        )
        source = self.reports[0]
        job.inputs.append(Read(source))
        feed = self._dataset(LAKE, "exports/partner_feed", "export", source.domain, list(source.columns))
        job.outputs.append(feed)
        job.dialect = "postgres"
        return job

    def _schema_changes(self) -> list[Dataset]:
        """Datasets whose schema changes on the change day, with the code of their writer."""
        picked = [self.raws[0], self.stagings[1 % len(self.stagings)], self.marts[0]]
        outputs = [d for d in self.datasets if d.layer in ("raw", "staging", "mart")]
        picked += [d for i, d in enumerate(outputs) if i % 25 == 24 and d not in picked]
        for ds in picked:
            writer = self.writer(ds)
            writer.code_change = True
            derived = writer.lineage[0][0]
            v2 = Derived(list(derived.columns), dict(derived.fields), list(derived.dataset))
            if ds.layer == "raw":
                v2.add(
                    Column("_cdc_lsn", "BIGINT", "meta", description="Log sequence number of the change"), []
                )
            elif ds.layer == "staging":
                v2.columns = [
                    Column(c.name, "DECIMAL(38,6)", c.role) if c.type == "DECIMAL(18,2)" else c
                    for c in v2.columns
                ]
                basis = first_column(writer.inputs[0].dataset.columns, "dim", "pii", "key")
                assert basis is not None
                expr = f"{basis.name} IN ('test', 'qa') OR {basis.name} LIKE '%@example.com'"
                use = Use(writer.inputs[0].ref, basis.name, "DIRECT", "TRANSFORMATION", expr)
                v2.add(Column("is_test", "BOOLEAN", "flag"), [use])
            else:
                measure = next((c for c in v2.columns if c.role == "measure" and c.name in v2.fields), None)
                if measure is not None:
                    uses = [
                        Use(u.ref, u.field, u.type, "TRANSFORMATION", f"{u.description} * fx.rate_to_usd")
                        for u in v2.fields[measure.name]
                        if u.type == "DIRECT"
                    ]
                    v2.add(Column(f"{measure.name}_usd", "DECIMAL(18,2)", "measure"), uses)
                else:
                    v2.add(Column("refreshed_at", "TIMESTAMP", "meta"), [])
            ds.columns_v2 = v2.columns
            writer.lineage[0] = (derived, v2)
        # The cycle job writes the first staging table too: its lineage follows that schema.
        cycle_target = self.cycle_job.outputs[0]
        mart_read = self.cycle_job.inputs[0]
        self.cycle_job.lineage[0] = (
            derive_reconcile(mart_read, cycle_target.columns),
            derive_reconcile(mart_read, cycle_target.schema(True)),
        )
        return picked
