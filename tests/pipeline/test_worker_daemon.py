"""Spark's Python workers import PySpark from the installed package, not from Spark's zip of it."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from headwater.pipeline.worker_daemon import zipped_copies


def _site(root: Path, *, packages: tuple[str, ...] = ("pyspark", "py4j")) -> tuple[Path, Path]:
    """A site folder holding `packages` and Spark's zips under pyspark/python/lib."""
    site = root / "site-packages"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    for package in packages:
        (site / package).mkdir(exist_ok=True)
        (site / package / "__init__.py").write_text("")
    for name in ("pyspark.zip", "py4j-0.10.9.9-src.zip", "other.zip"):
        with zipfile.ZipFile(lib / name, "w") as archive:
            archive.writestr("x.py", "")
    return site, lib


def test_the_zips_of_packages_installed_beside_them_are_copies(tmp_path: Path) -> None:
    site, lib = _site(tmp_path)
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(lib / "other.zip"), str(site)]
    assert zipped_copies(path) == path[:2], "another zip Spark was given stays"


def test_a_zip_stays_when_its_package_is_not_installed_beside_it_or_not_on_the_path(tmp_path: Path) -> None:
    site, lib = _site(tmp_path, packages=("pyspark",))
    zips = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    assert zipped_copies([*zips, str(site)]) == zips[:1], "no py4j package beside the py4j zip"
    assert zipped_copies(zips) == [], "the site folder is not on the path: the zip is all there is"
    elsewhere = tmp_path / "spark-home" / "python" / "lib"  # a Spark distribution's SPARK_HOME
    elsewhere.mkdir(parents=True)
    assert zipped_copies([str(elsewhere / "pyspark.zip"), str(site)]) == []


def _worker_view(_: object) -> str:
    import pyspark as worker_pyspark  # the worker's own import

    zips = [entry for entry in sys.path if entry.endswith(".zip") and "pyspark" in entry]
    return f"{worker_pyspark.__file__}|{','.join(zips)}|{os.path.basename(sys.argv[0])}"


def test_spark_s_python_workers_import_pyspark_from_the_installed_package(spark: SparkSession) -> None:
    view = F.udf(_worker_view, "string", useArrow=False)
    seen = {row[0] for row in spark.range(2).select(view(F.col("id"))).collect()}
    assert len(seen) == 1
    module, zips, _ = seen.pop().split("|")
    assert module == pyspark.__file__, "the package the driver imports, compiled once"
    assert zips == "", "Spark's zips of PySpark and py4j are off the worker's path"
