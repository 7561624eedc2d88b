"""Delivering an owner's notice: a generic webhook, a Slack incoming webhook, or email.

- Webhooks go through :class:`gpuplan.providers.webhook.WebhookNotifier` (the hardened
  client of :mod:`gpuplan.providers.http`: https to a public host unless the policy's
  ``owners.allow_insecure``, no redirects, a POST sent again only when it never
  connected). Slack gets its documented incoming-webhook body, ``{"text": ...}``; a
  generic webhook gets ``{"text": ..., "notice": {...}}``.
- Email goes through the standard library's :mod:`smtplib` (STARTTLS or implicit TLS
  with a verifying context; plain only to a loopback relay with ``allow_insecure``).
  The password comes in as an argument, read from the environment by the caller.

Every failure comes back as a :class:`~gpuplan.providers.webhook.Delivery` whose text
names the destination by its kind and host only: a webhook URL's path and the password
are secrets and never appear in a message, a log or the ledger.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuplan.core.lifecycle.owner_notice import OwnerNotice
from gpuplan.core.policy.lifetime_settings import Smtp
from gpuplan.providers.webhook import Delivery, WebhookNotifier, redact_url

if TYPE_CHECKING:
    import smtplib  # loaded when a mail is sent: a run that mails nobody never imports it

SMTP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Hook:
    """A webhook destination: its kind (``slack`` or ``webhook``) and its URL (a secret)."""

    kind: str
    url: str
    allow_insecure: bool = False

    @property
    def shown(self) -> str:
        return f"{self.kind} {redact_url(self.url)}"

    def send(self, notice: OwnerNotice) -> Delivery:
        hook = WebhookNotifier(self.url, allow_insecure=self.allow_insecure)
        extra: dict[str, Any] | None = None if self.kind == "slack" else {"notice": notice.record()}
        return hook.send(notice.text(), extra=extra)


@dataclass(frozen=True)
class Mail:
    """An email destination: the server settings, the password (a secret) and recipients."""

    smtp: Smtp
    to: tuple[str, ...]
    password: str | None = None
    allow_insecure: bool = False

    @property
    def shown(self) -> str:
        return f"email via {self.smtp.host}:{self.smtp.port} to {', '.join(self.to)}"

    def send(self, notice: OwnerNotice) -> Delivery:
        import smtplib
        from email.message import EmailMessage

        where = f"smtp {self.smtp.host}:{self.smtp.port}"
        refused = self._refused()
        if refused:
            return Delivery(False, None, f"{where}: not sent: {refused}")
        message = EmailMessage()
        message["From"] = self.smtp.sender
        message["To"] = ", ".join(self.to)
        message["Subject"] = f"gpuplan: {notice.instance_id}: {notice.rule}"
        message.set_content(notice.text())
        try:
            with self._connect() as server:
                if self.smtp.username and self.password:
                    server.login(self.smtp.username, self.password)
                server.send_message(message)
        except smtplib.SMTPResponseException as exc:
            return Delivery(False, exc.smtp_code, f"{where} answered {exc.smtp_code}")
        except (smtplib.SMTPException, OSError) as exc:
            return Delivery(False, None, f"{where} unreachable or refused: {type(exc).__name__}")
        return Delivery(True, 250)

    def _refused(self) -> str | None:
        if self.smtp.tls != "none":
            return None
        if not self.allow_insecure:
            return "tls: none needs owners.allow_insecure (a lab relay)"
        try:
            loopback = ipaddress.ip_address(self.smtp.host).is_loopback
        except ValueError:
            loopback = self.smtp.host == "localhost"
        return None if loopback else "tls: none is allowed to a loopback relay only"

    def _connect(self) -> smtplib.SMTP:
        import smtplib
        import ssl

        context = ssl.create_default_context()
        host, port = self.smtp.host, self.smtp.port
        if self.smtp.tls == "implicit":
            return smtplib.SMTP_SSL(host, port, timeout=SMTP_TIMEOUT_S, context=context)
        server = smtplib.SMTP(host, port, timeout=SMTP_TIMEOUT_S)
        if self.smtp.tls == "starttls":
            try:
                server.starttls(context=context)
            except BaseException:
                server.close()
                raise
        return server


Channel = Hook | Mail
