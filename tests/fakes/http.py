"""A tiny HTTP(S) server on 127.0.0.1 that hands requests to a fake cloud API.

Each fake is a :class:`FakeApi`: it names every request (``aggregatedList``, ``stop``,
``deallocate``...), counts it, and can be told to fail the next N requests of a name
with a status (429, 500, 503) before answering normally. Served over TLS when given a
``trustme`` CA, so real credential chains and TLS verification stay on.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme

Reply = tuple[int, dict[str, str], Any]
OPEN_PATHS = ("/token", "/openid-configuration")
"""Token and discovery endpoints: reached without a bearer token."""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Lower-case names."""
    body: bytes
    base_url: str

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


Handler = Callable[..., Reply]


@dataclass
class FakeApi:
    """Routes (method, path regex) to handlers; counts and injects faults by name."""

    routes: list[tuple[str, re.Pattern[str], str, Handler]] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    faults: dict[str, list[int]] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    require_bearer: bool = False
    """Answer 401 to API calls without ``Authorization: Bearer``."""
    tokens: list[str] = field(default_factory=list)
    """Bearer tokens seen, in order."""
    holds: dict[str, tuple[threading.Event, threading.Event]] = field(default_factory=dict)
    """Name -> (seen, release): the first such request is handled (the cloud acts), then
    its answer waits for ``release``: a test can kill its client mid-call."""

    def route(self, method: str, pattern: str, name: str, handler: Handler) -> None:
        self.routes.append((method, re.compile(pattern + r"$"), name, handler))

    def fail(self, name: str, *statuses: int) -> None:
        """The next requests named ``name`` answer these statuses, in order."""
        self.faults.setdefault(name, []).extend(statuses)

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"code": status, "message": message}}

    def dispatch(self, request: Request) -> Reply:
        auth = request.headers.get("authorization", "")
        if auth.startswith("Bearer "):
            self.tokens.append(auth.removeprefix("Bearer "))
        elif self.require_bearer and not request.path.endswith(OPEN_PATHS):
            return 401, {}, self.error_body(401, "no bearer token")
        for method, pattern, name, handler in self.routes:
            match = pattern.match(request.path)
            if method == request.method and match:
                with self.lock:
                    self.calls[name] += 1
                    self.log.append((name, request.path))
                    pending = self.faults.get(name)
                    fault = pending.pop(0) if pending else None
                if fault is not None:
                    # Clouds send Retry-After with throttling and unavailability only;
                    # azure-core retries any answer that carries one.
                    headers = {"Retry-After": "0"} if fault in (429, 503) else {}
                    return fault, headers, self.error_body(fault, "injected")
                with self.lock:
                    reply = handler(request, **match.groupdict())
                hold = self.holds.pop(name, None)
                if hold is not None:
                    hold[0].set()
                    hold[1].wait(30)
                return reply
        return 404, {}, self.error_body(404, f"no route {request.method} {request.path}")


def _handler_class(api: FakeApi, base: list[str]) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            request = Request(
                self.command,
                parts.path,
                query,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                base[0],
            )
            status, headers, payload = api.dispatch(request)
            data = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            headers = {"Content-Type": "application/json", **headers}
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    return _Handler


@contextmanager
def serve(api: FakeApi, ca: trustme.CA | None = None) -> Iterator[str]:
    """Serve ``api`` on 127.0.0.1; yields the base URL (``https://`` when ``ca`` is given)."""
    base: list[str] = [""]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(api, base))
    scheme = "http"
    if ca is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    base[0] = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield base[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
