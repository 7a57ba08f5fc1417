"""The ingest POSTs as `headwater serve` answers them on the wire (`headwater.api.http_protocol`):
the same answers as the app's, one after another on a keep-alive connection, in order when
pipelined, and the app's own way for what the protocol leaves to it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.conftest import LiveServer
from tests.factories import run_event


class Connection:
    """One raw keep-alive HTTP/1.1 connection: requests written as given, answers read one by one."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def answer(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self._read()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._read()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(status_line.split()[1]), headers, body

    def closed_by_server(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def _read(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def post(path: str, body: bytes, *headers: str, version: str = "1.1") -> bytes:
    lines = [f"POST {path} HTTP/{version}", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [*headers, f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


GET_HEALTH = b"GET /api/atlas/v2/openlineage/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture
def connection(live_server: LiveServer) -> Iterator[Connection]:
    conn = Connection(live_server.port)
    yield conn
    conn.close()


def test_ingest_answers_on_one_keep_alive_connection(connection: Connection) -> None:
    event = orjson.dumps(run_event())
    connection.send(post("/api/v1/lineage", event))
    status, headers, body = connection.answer()
    assert status == 201 and headers["content-type"] == "application/json"
    event_id = orjson.loads(body)["eventId"]
    connection.send(post("/api/v1/lineage", event))
    status, _, body = connection.answer()
    assert status == 200 and orjson.loads(body) == {"eventId": event_id, "status": 200, "duplicate": True}

    bad = run_event()
    bad["run"]["runId"] = ""
    connection.send(post("/api/v1/lineage", orjson.dumps(bad)))
    status, _, body = connection.answer()
    assert status == 400 and orjson.loads(body)["message"] == "run.runId: must not be empty"

    good = run_event()
    connection.send(post("/api/v1/lineage/batch", orjson.dumps([good, bad])))
    status, _, body = connection.answer()
    outcomes = orjson.loads(body)
    assert status == 207 and [o["status"] for o in outcomes] == [201, 400]
    assert outcomes[1]["error"] == "run.runId: must not be empty"

    connection.send(post("/api/v1/lineage", b'{"run":'))
    status, _, body = connection.answer()
    assert status == 400 and orjson.loads(body)["message"].startswith("malformed JSON at line 1")

    connection.send(GET_HEALTH)  # the app answers the rest, on the same connection
    assert connection.answer()[0] == 200
    path = f"/api/atlas/v2/openlineage/runs/{good['run']['runId']}/events/{outcomes[0]['eventId']}"
    connection.send(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    status, _, body = connection.answer()
    assert status == 200 and orjson.loads(body)["events"][0]["event"] == good


def test_pipelined_requests_are_answered_in_order(connection: Connection) -> None:
    events = [orjson.dumps(run_event()) for _ in range(3)]
    connection.send(
        post("/api/v1/lineage", events[0])
        + GET_HEALTH
        + post("/api/v1/lineage", events[1])
        + post("/api/v1/lineage?", events[2])  # with a query string: the app's route
        + post("/api/v1/lineage", events[0])
    )
    answers = [connection.answer() for _ in range(5)]
    assert [status for status, _, _ in answers] == [201, 200, 201, 201, 200]
    assert b'"success":true' in answers[1][2]
    assert orjson.loads(answers[4][2])["eventId"] == orjson.loads(answers[0][2])["eventId"]


def test_http_1_0_is_answered_and_closed(connection: Connection) -> None:
    connection.send(post("/api/v1/lineage", orjson.dumps(run_event()), version="1.0"))
    status, headers, _ = connection.answer()
    assert status == 201 and headers["connection"] == "close"
    assert connection.closed_by_server()


def test_expect_100_continue_is_left_to_the_app(connection: Connection) -> None:
    event = orjson.dumps(run_event())
    head, body = post("/api/v1/lineage", event, "Expect: 100-continue").split(b"\r\n\r\n", 1)
    connection.send(head + b"\r\n\r\n")
    assert connection.answer()[0] == 100
    connection.send(body)
    assert connection.answer()[0] == 201


def test_a_body_over_the_limit_is_refused_and_the_connection_goes_on(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path}/limit.db", "--max-body-bytes", "2000")
    conn = Connection(server.port)
    try:
        large = orjson.dumps([run_event() for _ in range(10)])
        conn.send(post("/api/v1/lineage/batch", large))  # refused on its Content-Length
        status, _, body = conn.answer()
        assert status == 413 and b"larger than the limit of 2000 bytes" in body
        pieces = [large[i : i + 500] for i in range(0, 4000, 500)]
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
        conn.send(
            b"POST /api/v1/lineage/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
        )  # refused once it has read more than the limit
        status, _, body = conn.answer()
        assert status == 413 and b"larger than the limit of 2000 bytes" in body
        conn.send(post("/api/v1/lineage", orjson.dumps(run_event())))
        assert conn.answer()[0] == 201
    finally:
        conn.close()
        server.stop()


def test_write_keys_are_checked_by_the_app(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path}/keys.db", "--write-key", "secret")
    conn = Connection(server.port)
    try:
        event = orjson.dumps(run_event())
        conn.send(post("/api/v1/lineage", event))
        assert conn.answer()[0] == 401
        conn.send(post("/api/v1/lineage", event, "Authorization: Bearer secret"))
        assert conn.answer()[0] == 201
    finally:
        conn.close()
        server.stop()
