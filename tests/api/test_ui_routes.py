"""The web UI's pages and assets and the API documentation are served by the server itself, with
nothing loaded from another host."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

PAGES = [
    "/",
    "/search?q=orders",
    "/jobs?state=FAILED",
    "/datasets/s3%3A%2F%2Flake/raw%2Forders",
    "/jobs/warehouse/etl.clean_orders",
    "/runs/11111111-1111-4111-8111-111111111111",
    "/namespaces/warehouse",
    "/lineage?node=dataset:warehouse:public.orders_clean",
    "/impact?node=job:warehouse:etl.clean_orders",
    "/events",
]
FOREIGN = re.compile(r"""(?:src|href)=["'](?:https?:)?//""")


@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_the_ui_shell_with_a_strict_policy(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/assets/js/app.js">' in response.text
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "connect-src 'self'" in policy
    assert not FOREIGN.search(response.text)


def test_assets_are_served_from_the_package(client: TestClient) -> None:
    script = client.get("/assets/js/app.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert client.get("/assets/app.css").status_code == 200
    assert client.get("/favicon.ico").headers["content-type"] == "image/svg+xml"
    assert client.get("/assets/js/no-such-module.js").status_code == 404


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_api_docs_load_nothing_from_another_host(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", page.text)
    assert urls and all(u.startswith("/") for u in urls), urls
    for url in urls:
        if url.startswith("/docs/assets/"):
            assert client.get(url).status_code == 200, url


def test_unknown_paths_are_still_404(client: TestClient) -> None:
    assert client.get("/no-such-page").status_code == 404
    assert client.get("/api/v1/no-such-endpoint").status_code == 404
