"""A loopback HTTP proxy in front of moto_server that can hold one EC2 call mid-flight.

The child ``gpuplan`` sends its calls here (``AWS_ENDPOINT_URL``). The first request
whose body names ``Action=<held>`` is forwarded to moto (so the cloud acts), and its
answer is held back until the test releases it: the test can signal or kill the child
while that cloud call is in flight.
"""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Hold:
    action: str
    seen: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def holding_proxy(upstream: str, hold: Hold) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            request = urllib.request.Request(
                upstream + self.path, data=body, headers=headers, method="POST"
            )
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, payload = answer.status, answer.read()
                content_type = answer.headers.get("content-type", "text/xml")
            if f"Action={hold.action}".encode() in body:
                with hold.lock:
                    hold.count += 1
                    first = hold.count == 1
                if first:
                    hold.seen.set()
                    hold.release.wait(30)
            try:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the child was killed while its call was held

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        hold.release.set()
        server.shutdown()
        server.server_close()
