"""A tiny SMTP server on 127.0.0.1 (stdlib ``socketserver``) that keeps what it receives.

Speaks enough of RFC 5321 for :mod:`smtplib`: EHLO/HELO, AUTH PLAIN, MAIL, RCPT, DATA,
RSET, NOOP, QUIT. ``fail_with`` answers the next MAIL with that code (a refusal).
"""

from __future__ import annotations

import base64
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message


@dataclass
class Mailbox:
    messages: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)
    fail_with: int | None = None


def _handler(box: Mailbox) -> type[socketserver.StreamRequestHandler]:
    class Handler(socketserver.StreamRequestHandler):
        def reply(self, line: str) -> None:
            self.wfile.write(line.encode() + b"\r\n")

        def handle(self) -> None:
            self.reply("220 fake smtp ready")
            sender, rcpts = "", []
            while line := self.rfile.readline(65536):
                verb = line.decode(errors="replace").strip()
                upper = verb.upper()
                if upper.startswith("EHLO"):
                    self.wfile.write(b"250-fake\r\n250 AUTH PLAIN\r\n")
                elif upper.startswith("HELO"):
                    self.reply("250 fake")
                elif upper.startswith("AUTH PLAIN"):
                    raw = base64.b64decode(verb.split()[2]).split(b"\0")
                    box.logins.append((raw[1].decode(), raw[2].decode()))
                    self.reply("235 ok")
                elif upper.startswith("MAIL FROM:"):
                    if box.fail_with is not None:
                        code, box.fail_with = box.fail_with, None
                        self.reply(f"{code} refused")
                        continue
                    sender, rcpts = verb[10:].strip("<> "), []
                    self.reply("250 ok")
                elif upper.startswith("RCPT TO:"):
                    rcpts.append(verb[8:].strip("<> "))
                    self.reply("250 ok")
                elif upper == "DATA":
                    self.reply("354 go on")
                    body = b""
                    while (chunk := self.rfile.readline(65536)) not in (b".\r\n", b""):
                        body += chunk[1:] if chunk.startswith(b"..") else chunk
                    box.messages.append(message_from_bytes(body))
                    box.envelopes.append((sender, rcpts))
                    self.reply("250 queued")
                elif upper == "QUIT":
                    self.reply("221 bye")
                    return
                else:
                    self.reply("250 ok")

    return Handler


@contextmanager
def smtp_server() -> Iterator[tuple[int, Mailbox]]:
    """(port, mailbox) of a server on 127.0.0.1 for the ``with`` block."""
    box = Mailbox()
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _handler(box))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], box
    finally:
        server.shutdown()
        server.server_close()
