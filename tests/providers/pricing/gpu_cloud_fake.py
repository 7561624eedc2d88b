"""A loopback HTTP server standing in for the GPU clouds' price APIs.

It answers GET and POST with recorded response shapes (Lambda's instance types, RunPod's
GraphQL ``gpuTypes``, Vast.ai's offer search) and keeps every request it saw (method,
path, headers, body), so a test can check what was sent, the key included, without any
real network.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeApi:
    """``answer(method, path, body) -> (status, json)``; ``seen``: every request."""

    answer: Callable[[str, str, Any], tuple[int, Any]]
    seen: list[Seen] = field(default_factory=list)


@contextmanager
def serve(api: FakeApi) -> Iterator[str]:
    """Serve ``api`` on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(size) if size else b""
            body = json.loads(raw) if raw else None
            api.seen.append(Seen(method, self.path, dict(self.headers.items()), body))
            status, payload = api.answer(method, self.path, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def lambda_instance_types(prices_cents: dict[str, int]) -> dict[str, Any]:
    """``GET /api/v1/instance-types`` as Lambda answers it (two fields of each entry's specs)."""
    return {
        "data": {
            name: {
                "instance_type": {
                    "name": name,
                    "description": name,
                    "price_cents_per_hour": cents,
                    "specs": {"vcpus": 26, "memory_gib": 225, "storage_gib": 2816, "gpus": 1},
                },
                "regions_with_capacity_available": [{"name": "us-east-1"}],
            }
            for name, cents in prices_cents.items()
        }
    }


def runpod_gpu_types(rows: list[tuple[str, float | None, float | None]]) -> dict[str, Any]:
    """The GraphQL answer of ``gpuTypes``: (id, securePrice, communityPrice) per GPU."""
    return {
        "data": {
            "gpuTypes": [
                {
                    "id": gpu_id,
                    "displayName": gpu_id,
                    "memoryInGb": 80,
                    "securePrice": secure,
                    "communityPrice": community,
                }
                for gpu_id, secure, community in rows
            ]
        }
    }


def vast_offers(per_gpu: list[float], gpus: int = 1) -> dict[str, Any]:
    """The offer search's answer: offers with ``dph_total`` for ``gpus`` GPUs each."""
    return {
        "offers": [
            {"id": i, "gpu_name": "H100 SXM", "num_gpus": gpus, "dph_total": p * gpus}
            for i, p in enumerate(per_gpu)
        ]
    }
