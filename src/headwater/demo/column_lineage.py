"""How each layer's output columns derive from its inputs' columns: the schema of every output and
its column lineage (identity copies, transformations, aggregations, and the joins, filters and
groupings the whole output depends on)."""

from __future__ import annotations

from headwater.demo.nodes import Derived, Read, Ref, Use, first_column
from headwater.demo.scenario import Column


def _short(ref: Ref) -> str:
    return ref[1].replace("/", ".").rsplit(".", 1)[-1]


def _join_uses(p: Read, q: Read) -> list[Use]:
    """The INDIRECT JOIN dependencies of joining q to p: on q's key, or a column both share."""
    pcols, qcols = p.dataset.columns, q.dataset.columns
    qkey = first_column(qcols, "key")
    assert qkey is not None
    names = {c.name for c in pcols}
    shared = next((c.name for c in qcols if c.role in ("key", "fk") and c.name in names), None)
    pkey = first_column(pcols, "key")
    assert pkey is not None
    pjoin, qjoin = (shared, shared) if shared is not None else (pkey.name, qkey.name)
    on = f"JOIN {_short(q.ref)} ON {_short(p.ref)}.{pjoin} = {_short(q.ref)}.{qjoin}"
    return [Use(p.ref, pjoin, "INDIRECT", "JOIN", on), Use(q.ref, qjoin, "INDIRECT", "JOIN", on)]


def derive_raw(source: Read) -> Derived:
    out = Derived()
    for c in source.dataset.columns:
        out.add(c, [Use(source.ref, c.name, "DIRECT", "IDENTITY", f"{c.name} copied as is")])
    out.add(Column("_ingested_at", "TIMESTAMP", "meta"), [])
    return out


def derive_staging(p: Read, q: Read | None) -> Derived:
    out = Derived()
    for c in p.dataset.columns:
        use = Use(p.ref, c.name, "DIRECT", "IDENTITY", c.name)
        if c.role in ("key", "fk", "struct") or (c.role == "time" and c.type == "DATE"):
            out.add(c, [use])
        elif c.role == "pii":
            expr = f"sha2(lower(trim({c.name})), 256)"
            uses = [Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr, masking=True)]
            out.add(Column(f"{c.name}_sha256", "STRING", "pii_hash"), uses)
        elif c.role in ("dim", "text"):
            expr = f"lower(trim({c.name}))" if c.role == "dim" else f"trim({c.name})"
            out.add(Column(c.name, "STRING", c.role), [Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)])
        elif c.role == "measure":
            if c.type.startswith("DECIMAL"):
                expr = f"CAST({c.name} AS DECIMAL(18,2))"
                uses = [Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
                out.add(Column(c.name, "DECIMAL(18,2)", "measure"), uses)
            else:
                out.add(c, [use])
        elif c.role == "time":
            expr = f"to_utc_timestamp({c.name}, 'UTC')"
            out.add(
                Column(c.name, "TIMESTAMP", "time"), [Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
            )
    if q is not None:
        pick = first_column(q.dataset.columns, "dim", "text") or first_column(q.dataset.columns, "key")
        assert pick is not None
        uses = [Use(q.ref, pick.name, "DIRECT", "IDENTITY", pick.name), *_join_uses(p, q)]
        out.add(Column(f"{q.dataset.domain}_{pick.name}", "STRING", "dim"), uses)
    out.add(Column("_loaded_at", "TIMESTAMP", "meta"), [])
    return out


def derive_mart(p: Read, others: list[Read], with_dataset_deps: bool) -> Derived:
    out = Derived()
    key = first_column(p.dataset.columns, "key")
    assert key is not None
    for c in p.dataset.columns:
        if c.role in ("key", "fk", "dim", "measure", "struct"):
            out.add(c, [Use(p.ref, c.name, "DIRECT", "IDENTITY", c.name)])
        elif c.role == "time":
            expr = f"CAST({c.name} AS DATE)"
            uses = [Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
            out.add(Column(f"{c.name.removesuffix('_at').removesuffix('_on')}_date", "DATE", "time"), uses)
    for q in others:
        joins = _join_uses(p, q)
        measure = first_column(q.dataset.columns, "measure")
        if measure is not None:
            agg = Use(q.ref, measure.name, "DIRECT", "AGGREGATION", f"sum({measure.name})")
            column = Column(f"{q.dataset.domain}_{measure.name}_total", "DECIMAL(18,2)", "measure")
        else:
            qkey = first_column(q.dataset.columns, "key")
            assert qkey is not None
            agg = Use(q.ref, qkey.name, "DIRECT", "AGGREGATION", f"count(DISTINCT {qkey.name})")
            column = Column(f"{q.dataset.domain}_count", "BIGINT", "measure")
        out.add(column, [agg, *joins])
        if with_dataset_deps:
            out.dataset.extend(joins)
    if with_dataset_deps:
        out.dataset.insert(0, Use(p.ref, key.name, "INDIRECT", "GROUP_BY", f"GROUP BY {key.name}"))
        dim = first_column(p.dataset.columns, "dim")
        if dim is not None:
            where = f"WHERE {dim.name} IS NOT NULL"
            out.dataset.append(Use(p.ref, dim.name, "INDIRECT", "FILTER", where))
    return out


def derive_report(m: Read, other: Read | None, unit: str, with_dataset_deps: bool) -> Derived:
    out = Derived()
    cols = m.dataset.columns
    time_col, dim, measure, key = (
        first_column(cols, "time"),
        first_column(cols, "dim"),
        first_column(cols, "measure"),
        first_column(cols, "key"),
    )
    assert key is not None
    if time_col is not None:
        expr = f"date_trunc('{unit}', {time_col.name})"
        uses = [Use(m.ref, time_col.name, "DIRECT", "TRANSFORMATION", expr)]
        out.add(Column("report_date", "DATE", "time"), uses)
    if dim is not None:
        out.add(dim, [Use(m.ref, dim.name, "DIRECT", "IDENTITY", dim.name)])
    if measure is not None:
        uses = [Use(m.ref, measure.name, "DIRECT", "AGGREGATION", f"sum({measure.name})")]
        out.add(Column(f"total_{measure.name}", "DECIMAL(18,2)", "measure"), uses)
    out.add(
        Column("row_count", "BIGINT", "measure"),
        [Use(m.ref, key.name, "DIRECT", "AGGREGATION", "count(*)")],
    )
    if other is not None:
        joins = _join_uses(m, other)
        other_measure = first_column(other.dataset.columns, "measure")
        if other_measure is not None:
            agg = Use(other.ref, other_measure.name, "DIRECT", "AGGREGATION", f"avg({other_measure.name})")
            out.add(Column(f"avg_{other_measure.name}", "DOUBLE", "measure"), [agg, *joins])
    if with_dataset_deps and time_col is not None:
        window = f"WHERE {time_col.name} >= current_date - INTERVAL '90' DAY"
        out.dataset.append(Use(m.ref, time_col.name, "INDIRECT", "FILTER", window))
        out.dataset.append(Use(m.ref, time_col.name, "INDIRECT", "SORT", f"ORDER BY {time_col.name}"))
    if with_dataset_deps and dim is not None:
        out.dataset.append(Use(m.ref, dim.name, "INDIRECT", "GROUP_BY", f"GROUP BY {dim.name}"))
    return out


def derive_reconcile(mart: Read, target: list[Column]) -> Derived:
    """Columns of `target` filled back from the mart: the cycle's column lineage."""
    out = Derived()
    found = {c.name for c in mart.dataset.columns}
    key = first_column(mart.dataset.columns, "key")
    assert key is not None
    for c in target:
        uses = []
        if c.name in found and c.role != "meta":
            uses = [Use(mart.ref, c.name, "DIRECT", "IDENTITY", f"corrected {c.name}")]
        out.columns.append(c)
        if uses:
            out.fields[c.name] = uses
    where = f"WHERE {key.name} IN (SELECT {key.name} FROM corrections)"
    out.dataset.append(Use(mart.ref, key.name, "INDIRECT", "FILTER", where))
    return out
