"""The daemon Spark starts to fork its Python workers (`spark.python.daemon.module`): PySpark's
own daemon, with PySpark imported from the installed package instead of Spark's zipped copy.

Spark puts `$SPARK_HOME/python/lib/pyspark.zip` and py4j's zip first on its Python workers' path.
With PySpark installed by pip, SPARK_HOME is the installed package, so the zips hold the same
modules as the package beside them; but Python cannot keep compiled modules for a zip, so every
daemon compiled PySpark's modules from source again as it started: about 1 s of CPU at the
start of each Spark session (bench/README.md). This module takes those two zips off the path
when the package they copy is installed beside them (the same files), then runs PySpark's daemon
unchanged. It must not import PySpark before it has done so: it is the first thing the daemon
process runs (`python -m headwater.pipeline.worker_daemon <worker module>`), and
`headwater.pipeline` imports nothing.
"""

from __future__ import annotations

import os
import sys


def zipped_copies(path: list[str]) -> list[str]:
    """The entries of `path` that are Spark's zipped copies of PySpark or py4j, when the package
    each copies is installed where Spark found the zip (`<site>/pyspark/python/lib/<zip>`, with
    `<site>/pyspark` and `<site>/py4j` packages)."""
    on_path = {os.path.realpath(entry) for entry in path}
    copies = []
    for entry in path:
        lib, name = os.path.split(entry)
        if not name.endswith(".zip") or not lib.endswith(os.path.join("pyspark", "python", "lib")):
            continue
        site = os.path.dirname(os.path.dirname(os.path.dirname(lib)))
        if name == "pyspark.zip":
            package = "pyspark"
        elif name.startswith("py4j-") and name.endswith("-src.zip"):
            package = "py4j"
        else:
            continue
        if os.path.isfile(os.path.join(site, package, "__init__.py")) and os.path.realpath(site) in on_path:
            copies.append(entry)
    return copies


def main() -> None:
    copies = set(zipped_copies(sys.path))
    sys.path[:] = [entry for entry in sys.path if entry not in copies]
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
