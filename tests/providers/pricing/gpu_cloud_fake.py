"""A loopback HTTP server standing in for the GPU clouds' price APIs.

It answers GET and POST with recorded response shapes (Lambda's instance types, RunPod's
GraphQL ``gpuTypes``, Vast.ai's offer search) and keeps every request it saw (method,
path, headers, body), so a test can check what was sent, the key included, without any
real network.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.fakes.http import FakeApi as WireApi
from tests.fakes.http import Reply, Request
from tests.fakes.http import serve as serve_wire


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
    """Serve ``api`` on 127.0.0.1 through the shared wire fake (:mod:`tests.fakes.http`);
    yields the base URL. Every request is kept with its full path (query included, so a
    test can check that no key travels in the URL) and its headers."""

    def reply(request: Request) -> Reply:
        query = f"?{urlencode(request.query)}" if request.query else ""
        headers = {k.title(): v for k, v in request.headers.items()}
        body = json.loads(request.body) if request.body else None
        api.seen.append(Seen(request.method, request.path + query, headers, body))
        status, payload = api.answer(request.method, request.path + query, body)
        return status, {}, payload

    wire = WireApi()
    for method in ("GET", "POST"):
        wire.route(method, r"/.*", "gpu-cloud", reply)
    with serve_wire(wire) as base:
        yield base


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
