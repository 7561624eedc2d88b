"""A loopback HTTP server answering GET with a fake's ``page(path) -> (status, body)``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Page = Callable[[str], tuple[int, bytes]]


@contextmanager
def serve_pages(page: Page) -> Iterator[str]:
    """Serve JSON pages on 127.0.0.1; yields the base URL (``http://127.0.0.1:PORT``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = page(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

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
