"""The web UI: a single page of hand-written JavaScript modules and CSS (no build step) under
`assets/`, served by the same server as the API; the page paths it answers are listed here."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).parent / "assets"
INDEX = ASSETS / "index.html"

# Paths the UI's router draws (each page has its own URL); the server answers them with index.html.
PAGES = ("/", "/search", "/jobs", "/lineage", "/impact", "/events", "/elements")
PAGE_PREFIXES = ("/datasets/", "/jobs/", "/runs/", "/namespaces/", "/elements/")
