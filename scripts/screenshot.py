"""Take the README's screenshot of the lineage view (docs/lineage.png) in Debian's Chromium, from
the demo lineage published by the pipeline, so it can be made again after the UI changes:

    .venv/bin/python scripts/screenshot.py [--out docs/lineage.png]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ui import CHROMIUM_ARGS, build_store, serve  # noqa: E402

VIEW = (
    "/lineage?node=dataset:bigquery:acme-analytics.marts.fct_orders&depth=1"
    "&select=job:dbt-analytics:analytics.marts.fct_orders"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "lineage.png", help="the PNG to write")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    workdir = Path(tempfile.mkdtemp(prefix="headwater-screenshot-"))
    database_url = f"sqlite:///{workdir / 'headwater.db'}"
    build_store(database_url, synthetic=False)
    server, url = serve(database_url, workdir)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 760}, color_scheme="light")
            page.goto(url + VIEW)
            page.locator(".node").first.wait_for()
            page.get_by_role("button", name="Fit").click()
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
