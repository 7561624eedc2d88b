"""Shared fixtures for the policy, budget, ledger and webhook tests: a valid policy, a
policy file writer, a private ledger path and a local Slack-like webhook endpoint.

Import the fixtures into a test folder's conftest.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

VALID = """\
version: 1
name: team-a
scope:
  aws: {regions: [us-east-1]}
budget:
  monthly_usd: 1000
idle:
  threshold_percent: 5
"""


@pytest.fixture
def write_policy(tmp_path: Path) -> Callable[[str | bytes, str], Path]:
    def write(content: str | bytes, name: str = "policy.yaml") -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write


@pytest.fixture
def db_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("GPUPLAN_DB", str(path))
    yield path


class HookServer:
    """A local Slack-like webhook endpoint that records what it receives."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.received: list[dict[str, Any]] = []
        self.status = 200
        self.delay_s = 0.0
        self.location: str | None = None
        """When set, every answer is a 302 redirect to this URL."""
        self.body = b"ok"
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                import time

                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                if server.delay_s:
                    time.sleep(server.delay_s)
                server.received.append({"body": body, "type": self.headers["Content-Type"]})
                try:
                    self.send_response(302 if server.location else server.status)
                    if server.location:
                        self.send_header("Location", server.location)
                    self.send_header("Content-Length", str(len(server.body)))
                    self.end_headers()
                    self.wfile.write(server.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/services/T0/B0/secret"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    server = HookServer()
    yield server
    server.close()


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL on which nothing listens (the webhook server is down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"
