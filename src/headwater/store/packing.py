"""The packed form of the JSON the store writes for every event (issue 13): distinct facet values
and event cores, as a Zstandard frame made against a preset dictionary of OpenLineage's common
strings, behind a format byte. A packed core is kept as bytes in `events.core` (migration 0018);
cores written before it are in `events.payload`: a BLOB on SQLite, on PostgreSQL, whose `payload`
is TEXT, `~` and the base64 of the same bytes (a third longer), which reads still take.

A 1 KB core or a 300-byte facet value is mostly keys, `_producer` and `_schemaURL` strings and
namespaces: a compressor finds few repeats in so little text, the dictionary gives it them (a
bench core 960 -> 425 bytes in 6 µs, a facet value 336 -> 96; zlib with the same dictionary
packs as small but takes three times as long). A format's dictionary never changes: stored values
are read with it. Format 2 packs cores against a dictionary trained on the demo lineage's cores
(`packing_cores_2.zdict`, built by scripts/build_packing_dictionary.py): it carries entropy
tables, which format 1's raw content lacks, so a frame does not build its own (a bench core
442 -> 392 bytes, 6.6 -> 4.2 µs). Facet values stay in format 1: its hand-written strings suit
the small values events carry anew (nominalTime, outputStatistics), which a trained dictionary
packed a fifth larger in a trial. Format 3 is format 2 for cores that may keep small facets
inline (`headwater.events.facet_refs.kept_inline`): the same dictionary and frames, under a new
format byte, so that a release that predates inline facets refuses such a core (PackingError)
instead of failing on the object where it expects a hash. `unpack` reads every format.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from importlib import resources

import zstandard

FORMAT = 1  # facet values
CORE_FORMAT = 3  # format 2's packing; a core may hold facets inline
_TRAINED_FORMATS = (2, 3)  # cores packed against `packing_cores_2.zdict`
_VALUE_PREFIX, _CORE_PREFIX = bytes((FORMAT,)), bytes((CORE_FORMAT,))
_CORE_LEVEL = 3  # one core per event on the ingest path: speed first
_VALUE_LEVEL = 6  # only new facet values: a little more time for ~10% less
_DICTIONARY = "".join(
    (
        '"_producer":"https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/airflow",',
        '"_producer":"https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/dbt",',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/ColumnLineageDatasetFacet.json#/$defs/',
        'ColumnLineageDatasetFacet","fields":{"inputFields":[{"namespace":"","name":"","field":"',
        '","transformations":[{"type":"DIRECT","subtype":"IDENTITY","description":"","masking":false}]}',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/',
        'SchemaDatasetFacet","fields":[{"name":"","type":"string","description":""},{"name":"id","type":"',
        'integer"},{"name":"","type":"long"},{"name":"","type":"timestamp"},{"name":"","type":"decimal(',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json#/$defs/',
        'DatasourceDatasetFacet","name":"","uri":"',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/',
        'SymlinksDatasetFacet","identifiers":[{"namespace":"","name":"","type":"TABLE"}]',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/SQLJobFacet.json#/$defs/SQLJobFacet","query":"',
        "SELECT  FROM  WHERE  JOIN  ON  GROUP BY  INSERT INTO ",
        '"_schemaURL":"https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",',
        '"integration":"SPARK","jobType":"SQL_JOB","processingType":"BATCH"',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/SourceCodeLocationJobFacet.json#/$defs/',
        'SourceCodeLocationJobFacet","type":"git","url":"https://github.com/","path":"","version":"',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/',
        'OutputStatisticsOutputDatasetFacet","rowCount":,"size":',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet",',
        '"job":{"namespace":"","name":""},"root":{"job":{"namespace":"","name":""},"run":{"runId":"',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/',
        'ProcessingEngineRunFacet","name":"spark","openlineageAdapterVersion":"1.',
        '","version":"3.5.',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/',
        'NominalTimeRunFacet","nominalEndTime":"2024-01-01T00:00:00.000Z","nominalStartTime":"2024-01-01T00:00:00.000Z"}',
        '"_schemaURL":"https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/',
        'ErrorMessageRunFacet","message":"","programmingLanguage":"","stackTrace":"',
        '"_producer":"https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark",',
        '"inputFacets":{"dataQualityMetrics":"","inputStatistics":"',
        '"namespace":"s3://","namespace":"gs://","namespace":"hdfs://","namespace":"bigquery","namespace":"',
        'snowflake://","namespace":"postgres://","namespace":"kafka://","namespace":"file","namespace":"',
        '"processing_engine":"","spark_properties":"","spark.logicalPlan":"","environment-properties":"',
        '"errorMessage":"","sql":"","jobType":"","sourceCodeLocation":"","documentation":"","ownership":"',
        '"}},"outputs":[{"namespace":"","name":"","facets":{"schema":"","dataSource":"","columnLineage":"',
        '"},"outputFacets":{"outputStatistics":"',
        '"schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}',
        '{"eventType":"COMPLETE","eventTime":"2024-01-01T00:00:00.000Z","run":{"runId":"","facets":',
        '{"nominalTime":"","parent":""}},"job":{"namespace":"","name":"","facets":{"sql":"","jobType":"',
        '"}},"inputs":[{"namespace":"","name":"","facets":{"schema":"","dataSource":"","symlinks":"',
        '"producer":"https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark",',
    )
).encode()
_RAW = zstandard.ZstdCompressionDict(_DICTIONARY, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
_MAGICLESS = zstandard.FORMAT_ZSTD1_MAGICLESS  # the format byte says what this is
_CORES_2_FILE = "packing_cores_2.zdict"
_CORES_2_SHA256 = "de92372afeb53357a43f52ed61546818b93585aad533929ae1d4b8071a1433cb"


def _cores_2() -> zstandard.ZstdCompressionDict:
    """Format 2's dictionary, checked: a different file would make every stored core unreadable."""
    data = resources.files(__package__ or "headwater.store").joinpath(_CORES_2_FILE).read_bytes()
    if hashlib.sha256(data).hexdigest() != _CORES_2_SHA256:
        raise RuntimeError(f"{_CORES_2_FILE} is not the dictionary of packing format 2 (SHA-256 differs)")
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_FULLDICT)


_TRAINED = _cores_2()


class PackingError(ValueError):
    """A stored value packed in a format this release does not know (written by a newer one)."""


class _Codecs(threading.local):
    """Zstandard's (de)compressors are not for concurrent use: one set per thread."""

    def __init__(self) -> None:
        def compressor(dictionary: zstandard.ZstdCompressionDict, level: int) -> zstandard.ZstdCompressor:
            params = zstandard.ZstdCompressionParameters.from_level(
                level, format=_MAGICLESS, write_checksum=0, write_content_size=1, write_dict_id=0
            )
            return zstandard.ZstdCompressor(dict_data=dictionary, compression_params=params)

        self.core = compressor(_TRAINED, _CORE_LEVEL)
        self.value = compressor(_RAW, _VALUE_LEVEL)
        trained = zstandard.ZstdDecompressor(dict_data=_TRAINED, format=_MAGICLESS)
        self.unpackers = {FORMAT: zstandard.ZstdDecompressor(dict_data=_RAW, format=_MAGICLESS)}
        self.unpackers.update(dict.fromkeys(_TRAINED_FORMATS, trained))


_codecs = _Codecs()


def pack_core(text: bytes) -> bytes:
    """An event's core packed (the format byte, then the frame)."""
    return _CORE_PREFIX + _codecs.core.compress(text)


def pack_value(text: bytes) -> bytes:
    """A facet value packed (the format byte, then the frame)."""
    return _VALUE_PREFIX + _codecs.value.compress(text)


def unpack(packed: bytes | memoryview) -> str:
    """The text `pack_core` or `pack_value` was given."""
    return unpack_bytes(packed).decode()


def unpack_bytes(packed: bytes | memoryview) -> bytes:
    """The UTF-8 bytes of the text `pack_core` or `pack_value` was given (for a JSON parser, which
    reads them without a decoded copy)."""
    packed = bytes(packed)
    unpacker = _codecs.unpackers.get(packed[0])
    if unpacker is None:
        raise PackingError(f"stored value packed in unknown format {packed[0]}: written by a newer release")
    data: bytes = unpacker.decompress(packed[1:])
    return data


def stored_text(value: str | bytes | memoryview) -> str:
    """A stored value as text: packed (bytes, or `~` and base64), or text as it was written (JSON
    starts with `{`, never `~`)."""
    text = stored_json(value)
    return text if isinstance(text, str) else text.decode()


def stored_json(value: str | bytes | memoryview) -> str | bytes:
    """A stored value as `stored_text` gives it, but packed ones as their UTF-8 bytes: what a JSON
    parser reads."""
    if isinstance(value, str):
        return unpack_bytes(packed_bytes(value)) if value.startswith("~") else value
    return unpack_bytes(value)


def packed_bytes(text: str) -> bytes:
    """The packed bytes a TEXT payload kept as `~` and their base64 (PostgreSQL, before 0018)."""
    return base64.b64decode(text[1:])
