"""The shared HTTP client at the wire (a local server, real sockets): Retry-After is
honoured (seconds and HTTP dates, capped), backoff has full jitter, the webhook's POST is
never sent twice, one connection pool serves a run, and the public-only guard connects to
the address it checked (no second lookup: no DNS-rebinding window)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpuplan.providers import http
from gpuplan.providers.http import HttpError, Limits, request, retry_after_s, split
from gpuplan.providers.webhook import WebhookNotifier
from tests.fakes.policy_fixtures import HookServer

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
PUBLIC = "93.184.215.14"


class WireServer:
    """HTTP/1.1 with keep-alive: answers the queued (status, headers) in turn, then 200;
    records each request's Host header and counts the TCP connections it accepted."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, dict[str, str]]] = []
        self.hosts: list[str] = []
        self.connections = 0
        wire = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                wire.connections += 1
                super().setup()

            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                wire.hosts.append(self.headers.get("Host", ""))
                status, headers = wire.answers.pop(0) if wire.answers else (200, {})
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,))
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    http.close_clients()
    server = WireServer()
    yield server
    http.close_clients()
    server.close()


def _no_wait() -> tuple[list[float], dict[str, Any]]:
    waits: list[float] = []
    return waits, {"sleep": waits.append, "clock": lambda: NOW}


def test_a_429_waits_the_seconds_its_retry_after_asks(wire: WireServer) -> None:
    wire.answers = [(429, {"Retry-After": "7"})]
    waits, hooks = _no_wait()
    response = request("GET", wire.url + "/p", limits=Limits(attempts=3), **hooks)
    assert response.status == 200 and waits == [7.0] and len(wire.hosts) == 2


def test_a_retry_after_date_is_read_against_the_clock(wire: WireServer) -> None:
    wire.answers = [(503, {"Retry-After": "Fri, 04 Dec 2026 12:00:12 GMT"})]
    waits, hooks = _no_wait()
    assert request("GET", wire.url, limits=Limits(), **hooks).status == 200
    assert waits == [12.0]
    assert retry_after_s("Fri, 04 Dec 2026 11:00:00 GMT", NOW) == 0.0  # past: at once
    assert retry_after_s("soon", NOW) is None


def test_a_retry_after_over_the_cap_ends_the_call_at_once(wire: WireServer) -> None:
    wire.answers = [(429, {"Retry-After": "3600"})]
    waits, hooks = _no_wait()
    with pytest.raises(HttpError, match=r"asks to wait 3600s \(Retry-After\)") as caught:
        request("GET", wire.url, limits=Limits(attempts=3), **hooks)
    assert caught.value.status == 429 and waits == [] and len(wire.hosts) == 1


def test_backoff_has_full_jitter(wire: WireServer) -> None:
    wire.answers = [(503, {}), (503, {})]
    asked: list[tuple[float, float]] = []

    def jitter(low: float, high: float) -> float:
        asked.append((low, high))
        return high / 4

    waits, hooks = _no_wait()
    request("GET", wire.url, limits=Limits(attempts=3, backoff_s=2.0), jitter=jitter, **hooks)
    assert asked == [(0.0, 2.0), (0.0, 4.0)] and waits == [0.5, 1.0]
    # Unseeded, the waits spread over the range instead of all being the same.
    spread = {http.backoff(1, 1.0) for _ in range(20)}
    assert len(spread) > 1 and all(0.0 <= w <= 1.0 for w in spread)


def test_the_webhook_post_is_sent_once_on_a_503() -> None:
    server = HookServer()
    try:
        server.status = 503
        delivery = WebhookNotifier(server.url, allow_insecure=True).send("budget at 90%")
    finally:
        server.close()
    assert len(server.received) == 1
    assert not delivery.ok and delivery.status == 503


def _drop_after_reading() -> tuple[socket.socket, list[int]]:
    """A server that reads a request, then closes without answering: the request was sent."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = [0]

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted[0] += 1
            conn.recv(65536)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener, accepted


@pytest.mark.parametrize(("idempotent", "tries"), [(False, 1), (True, 2)])
def test_a_post_that_may_have_arrived_is_not_sent_again(idempotent: bool, tries: int) -> None:
    listener, accepted = _drop_after_reading()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    _, hooks = _no_wait()
    try:
        with pytest.raises(HttpError):
            request(
                "POST", url, limits=Limits(attempts=2, idempotent=idempotent), json_body={}, **hooks
            )
    finally:
        listener.close()
    assert accepted[0] == tries


def test_a_post_that_could_not_connect_is_tried_again(closed_port_url: str) -> None:
    waits, hooks = _no_wait()
    with pytest.raises(HttpError, match="after 2 attempts"):
        request("POST", closed_port_url, limits=Limits(attempts=2, idempotent=False), **hooks)
    assert len(waits) == 1


def test_one_connection_serves_every_call_of_a_run(wire: WireServer) -> None:
    wire.answers = [(503, {})]
    _, hooks = _no_wait()
    for page in range(3):
        request("GET", f"{wire.url}/page/{page}", limits=Limits(), **hooks)
    assert len(wire.hosts) == 4 and wire.connections == 1


def test_the_guard_connects_to_the_address_it_checked(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resolver that answers a public address first and loopback afterwards (DNS
    rebinding): the call resolves once and connects to the checked address, with the
    URL's name in the Host header."""
    lookups: list[str] = []
    connects: list[str] = []
    real_create, real_lookup = socket.create_connection, socket.getaddrinfo

    def rebinding(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        if host == "127.0.0.1":  # the test's own redirect to the local server
            return real_lookup(host, *args, **kwargs)
        lookups.append(host)
        address = PUBLIC if len(lookups) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, wire.port))]

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        host = address[0]
        connects.append(host if host == PUBLIC else rebinding(host)[0][4][0])
        return real_create(("127.0.0.1", wire.port), *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    url = f"http://hooks.example.com:{wire.port}/services/T/B/secret"
    response = request("POST", url, limits=Limits(public_only=True, hide_path=True), json_body={})
    assert response.status == 200
    assert lookups == ["hooks.example.com"] and connects == [PUBLIC]
    assert wire.hosts == [f"hooks.example.com:{wire.port}"]


@pytest.mark.parametrize(
    "url",
    [
        "http://evil.example\\@good.example/",
        "http://good.example:80\\@evil.example/",
        "http://a@evil.example:80@good.example/",
        "http://good.example#@evil.example/",
        "http://good.example:/x",
        "HTTP://GOOD.example:0080/x",
    ],
)
def test_the_parts_judged_are_the_parts_httpx_fetches(url: str) -> None:
    parts = split(url, "<url>")[1]
    fetched = httpx.URL(url)
    assert parts.host == fetched.host and parts.port == fetched.port


@pytest.mark.parametrize(
    "url", ["http://127.1/", "http://0x7f.1/", "http://host:99999/", "http://exa%6dple.com/"]
)
def test_hosts_httpx_would_take_are_still_refused(url: str) -> None:
    with pytest.raises(HttpError):
        request("GET", url, limits=Limits(attempts=1))


def test_httpx_is_loaded_only_by_a_call(tmp_path: Path) -> None:
    """A dry run on the demo fleet (no webhook sent) never imports httpx (~0.1 s)."""
    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys\n"
        "from gpuplan.cli.main import main\n"
        "code = main(['stop-idle', '--policy', 'docs/examples/demo-policy.yaml'])\n"
        "print(code, 'httpx' in sys.modules)\n"
    )
    env = {
        **os.environ,
        "GPUPLAN_FAKE_FLEET": "docs/examples/demo-fleet.json",
        "GPUPLAN_DB": str(tmp_path / "demo.db"),
        "GPUPLAN_WEBHOOK_URL": "http://127.0.0.1:9/",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env
    )
    assert done.stdout.strip().splitlines()[-1] == "0 False", done.stderr


@pytest.mark.parametrize(
    ("host", "ascii_host"),
    [
        ("hooks.example.com", "hooks.example.com"),
        ("bücher.example", "xn--bcher-kva.example"),
        # IDNA 2008 (httpx, the Host header) keeps ß; IDNA 2003 (Python's codec) makes it ss
        ("straße.example", "xn--strae-oqa.example"),
    ],
)
def test_the_pinned_https_call_verifies_the_certificate_of_the_name(
    host: str, ascii_host: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Connected to the checked address, TLS still sends the URL's name (SNI, in its
    ASCII form for an internationalised name) and checks the certificate against it: a
    certificate for another name is refused."""
    import ssl

    import certifi
    import trustme

    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    names: list[str | None] = []
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(ascii_host).configure_cert(server_ctx)
    server_ctx.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment]
    server = WireServer()
    server._httpd.socket = server_ctx.wrap_socket(server._httpd.socket, server_side=True)
    real_create, real_lookup = socket.create_connection, socket.getaddrinfo
    connects: list[str] = []

    def lookup(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        if host == "127.0.0.1":
            return real_lookup(host, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC, server.port))]

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        connects.append(address[0])
        return real_create(("127.0.0.1", server.port), *args, **kwargs)

    monkeypatch.setattr(certifi, "where", lambda: str(ca_file))
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    http.close_clients()
    limits = Limits(public_only=True, hide_path=True, attempts=1)
    try:
        url = f"https://{host}:{server.port}/services/T/B/secret"
        assert request("POST", url, limits=limits, json_body={}).status == 200
        with pytest.raises(HttpError):
            request("POST", url.replace(host, f"other.{host}"), limits=limits, json_body={})
    finally:
        http.close_clients()
        server.close()
    assert connects[0] == PUBLIC and names[0] == ascii_host
    assert server.hosts == [f"{ascii_host}:{server.port}"]
