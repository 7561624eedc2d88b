"""URLs in policies and calls: the rules on a URL's parts, judged for where they point.

Pure (no ``urllib``, no sockets, no HTTP library) and without a URL splitter of its own:
the edge splits a URL with httpx, the parser that fetches it
(:func:`gpuplan.providers.url_parts.split_url`), and hands the parts (:class:`Url`) here,
so the string judged at ``policy check`` and the string fetched are split by one parser.
What :func:`checked` refuses, with a message that never repeats the URL's secret parts:

- any scheme other than ``http`` and ``https``; (in :func:`precheck`, on the whole
  string) whitespace or control characters, more than 2,048 characters;
- a missing or malformed host (labels of letters, digits and ``-``, at most 63 each
  and 253 in all; IPv4 only as four decimal octets, so ``127.1``, ``2852039166`` or
  ``0x7f.1`` are not taken for names; IPv6 in brackets, without a zone id); a port that
  is not from 1 to 65535.

:func:`webhook_url_problem` adds the rules for outgoing messages: ``https`` to a
*public* host (a global IP address, or a name that is neither ``localhost`` nor a
private suffix such as ``.internal``) unless the policy opts in, and never a link-local
address (cloud metadata services live there), opt-in or not. An IP literal with a
trailing dot (``169.254.169.254.``) is that address: the resolver connects to it.

:func:`redacted` shows parts with scheme, host and port; user info becomes ``***@``, a
query ``?***``, a fragment is dropped, and path segments that look like tokens (long,
or mixing letters and digits) become ``***``. :func:`redacted_webhook` keeps the origin.

PostgreSQL connection URIs (the ledger's ``--db postgresql://...``) have their own
rules: :func:`redact_dsn` shows them without the password (user info or ``password=``),
:func:`dsn_problem` refuses one whose password the driver would split wrongly, and
:func:`scrub` takes known secret values out of any message (a driver's error text).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

MAX_URL_LENGTH = 2048
SCHEMES = ("http", "https")
PRIVATE_SUFFIXES = (
    ".localhost",
    ".local",
    ".internal",
    ".intranet",
    ".corp",
    ".home",
    ".home.arpa",
    ".lan",
    ".localdomain",
)
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_TOKENISH = re.compile(r"(?=.*[A-Za-z])(?=.*[0-9])")


DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Url:
    """The parts of an http(s) URL as the edge's parser split them; ``port`` is None
    when not written (or written as the scheme's default)."""

    scheme: str
    userinfo: str | None
    host: str
    port: int | None
    path: str
    query: str | None
    fragment: str | None

    @property
    def ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The host as an IP address, when it is written as one (a trailing dot, which the
        resolver ignores, included)."""
        bare = self.host.strip("[]")
        try:
            return ipaddress.ip_address(bare[:-1] if bare.endswith(".") else bare)
        except ValueError:
            return None

    def origin(self) -> str:
        """``scheme://host[:port]``: nothing secret. A port that is the scheme's default
        is left out, so ``https://h:443`` and ``https://h`` are one origin (Azure's next
        links spell ``:443`` out; the endpoint does not)."""
        port = "" if self.port in (None, DEFAULT_PORTS[self.scheme]) else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}"


Split = Callable[[str], Url]
"""The edge's splitter: a URL's parts as the fetching parser sees them, judged by
:func:`checked`; ValueError (a message without secrets) when it refuses the URL."""


def precheck(text: str) -> None:
    """The checks on the whole string before any split: ValueError when it fails them."""
    if not isinstance(text, str):
        raise ValueError("expected an http:// or https:// URL")
    if len(text) > MAX_URL_LENGTH:
        raise ValueError(f"URL longer than {MAX_URL_LENGTH} characters")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("URL contains whitespace or control characters")


def checked(url: Url) -> Url:
    """``url`` when its parts obey the rules above (whoever split it: the edge hands
    over the parts httpx will fetch); ValueError otherwise. IPv6 hosts come with or
    without their brackets and leave with them."""
    if url.scheme.lower() not in SCHEMES:
        raise ValueError("expected an http:// or https:// URL")
    host = url.host
    if ":" in host:
        bare = host.strip("[]")
        if "%" in bare:
            raise ValueError("URL host is an IPv6 address with a zone id (not allowed)")
        try:
            ipaddress.IPv6Address(bare)
        except ValueError:
            raise ValueError("URL host in brackets is not an IPv6 address") from None
        host = f"[{bare}]"
    else:
        _check_host_name(host)
    port = url.port
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"URL port must be from 1 to 65535, got {port}")
    return replace(url, scheme=url.scheme.lower(), host=host.lower())


def _check_host_name(host: str) -> None:
    if not host:
        raise ValueError("URL has no host (expected http(s)://host[:port]/...)")
    if not host.isascii() or "%" in host:
        raise ValueError("URL host must be plain ASCII (write an IDN in its xn-- form)")
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValueError("URL host is not a valid host name or IP address")
    if _NUMERIC_LABEL.match(labels[-1]):
        # No top-level domain is numeric: this is an IP literal and must be a plain one.
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            raise ValueError(
                "URL host looks like an IP address but is not four decimal octets"
            ) from None


def host_is_public(url: Url) -> bool:
    """True for a global IP address, or a name that is not local by its suffix."""
    ip = url.ip
    if ip is not None:
        return bool(ip.is_global) and not ip.is_multicast
    name = url.host.rstrip(".")
    if "." not in name or name == "localhost":
        return False
    return not any(name.endswith(suffix) for suffix in PRIVATE_SUFFIXES)


def is_link_local(url: Url) -> bool:
    """True for a link-local address (169.254.0.0/16, fe80::/10: metadata services)."""
    ip = url.ip
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_link_local) or str(ip) == "fd00:ec2::254"


def webhook_url_problem(url: Url, shown: str, *, allow_insecure: bool) -> str | None:
    """Why the webhook at ``url`` (parts split by the edge, so the parts judged are the
    parts fetched) may not receive messages, or None; ``shown`` names it in the message."""
    if is_link_local(url):
        return f"{shown}: a link-local address (cloud metadata service) never receives messages"
    if allow_insecure:
        return None
    if url.scheme != "https":
        return (
            f"{shown}: webhook URLs must use https (set notify.allow_insecure_webhook: true "
            "to allow http)"
        )
    if not host_is_public(url):
        return (
            f"{shown}: webhook host is not public (loopback, private or local name); set "
            "notify.allow_insecure_webhook: true to allow it"
        )
    return None


def redacted(url: Url) -> str:
    """``url`` safe to print, log or store (see the module docstring)."""
    auth = "***@" if url.userinfo is not None else ""
    port = f":{url.port}" if url.port is not None else ""
    segments = [_redact_segment(s) for s in url.path.split("/")]
    query = "?***" if url.query else ""
    return f"{url.scheme}://{auth}{url.host}{port}{'/'.join(segments)}{query}"


def redacted_webhook(url: Url) -> str:
    """A webhook URL's origin only: its whole path is the secret (Slack, Teams)."""
    return url.origin() + "/..."


def _redact_segment(segment: str) -> str:
    if len(segment) >= 24 or (len(segment) >= 8 and _TOKENISH.match(segment)):
        return "***"
    return segment


# PostgreSQL connection URIs (the ledger's ``--db postgresql://...``) -----------------

DSN_SCHEMES = ("postgresql", "postgres")
_DSN_SPLIT = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$")
"""RFC 3986, appendix B, for PostgreSQL URIs only (libpq splits them, never httpx);
:func:`dsn_problem` refuses the URIs on which the two could differ."""
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


def is_postgres_dsn(text: str | None) -> bool:
    """True when ``text`` is a ``postgresql://`` or ``postgres://`` URI (not a file path)."""
    if not text:
        return False
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in DSN_SCHEMES


def dsn_problem(text: str) -> str | None:
    """Why a PostgreSQL URI is refused before any driver reads it; None when it is not.

    Refused: whitespace or control characters, and a ``/``, ``?``, ``#`` or second
    ``@`` before the last ``@``. The driver would split such a URI elsewhere than its
    author meant (``user:p@ss/word@host``: password ``p``, host ``ss``) and then quote
    the rest of the password back as a host or database name in its errors.
    """
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        return "the URL contains whitespace or control characters"
    if _ambiguous(text):
        return (
            "the URL has '/', '?', '#' or '@' before its last '@': percent-encode them in "
            "the user name and password (%2F, %3F, %23, %40), or better, keep the password "
            "out of the URL (PGPASSFILE or PGPASSWORD)"
        )
    return None


def _ambiguous(text: str) -> bool:
    rest = text.partition("://")[2]
    before_last_at = rest.rpartition("@")[0]
    return any(c in before_last_at for c in "/?#@")


def redact_dsn(text: str) -> str:
    """A PostgreSQL URI safe to print, log or store: the password never survives.

    Scheme, user, hosts, ports, database and query keys are kept (none is secret);
    ``user:password@`` becomes ``user:***@`` and ``password=`` or ``sslpassword=`` in
    the query become ``password=***``; a fragment is dropped. A URI that
    :func:`dsn_problem` refuses shows as ``scheme://***`` (where its password ends is
    not known); one that does not split at all as ``<unparsable PostgreSQL URL>``.
    """
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        return "<unparsable PostgreSQL URL>"
    match = _DSN_SPLIT.match(text)
    if match is None or (match.group(1) or "").lower() not in DSN_SCHEMES:
        return "<unparsable PostgreSQL URL>"
    if _ambiguous(text):
        return f"{match.group(1)}://***"
    userinfo, at, hosts = (match.group(2) or "").rpartition("@")
    user, colon, _password = userinfo.partition(":")
    auth = f"{user}{':***' if colon else ''}{at}"
    query = match.group(4)
    shown_query = ""
    if query is not None:
        parts = []
        for item in query.split("&"):
            key, eq, _value = item.partition("=")
            parts.append(f"{key}=***" if eq and key.lower() in _SECRET_PARAMS else item)
        shown_query = "?" + "&".join(parts)
    return f"{match.group(1)}://{auth}{hosts}{match.group(3) or ''}{shown_query}"


def dsn_secrets(text: str) -> list[str]:
    """The secret values written in a PostgreSQL URI (raw and percent-decoded), for
    :func:`scrub`: a driver's message may quote them however the URI spelt them."""
    from_uri: list[str] = []
    match = _DSN_SPLIT.match(text)
    if match is not None:
        userinfo = (match.group(2) or "").rpartition("@")[0]
        if ":" in userinfo:
            from_uri.append(userinfo.partition(":")[2])
        for item in (match.group(4) or "").split("&"):
            key, eq, value = item.partition("=")
            if eq and key.lower() in _SECRET_PARAMS:
                from_uri.append(value)
    found: list[str] = []
    for raw in from_uri:
        found.extend((raw, _percent_decoded(raw)))
    return sorted({s for s in found if s}, key=len, reverse=True)


def scrub(message: str, secrets: list[str] | tuple[str, ...]) -> str:
    """``message`` with every occurrence of each secret replaced by ``***``."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            message = message.replace(secret, "***")
    return message


def _percent_decoded(text: str) -> str:
    out = bytearray()
    i = 0
    raw = text.encode("utf-8")
    while i < len(raw):
        if raw[i : i + 1] == b"%" and re.fullmatch(rb"[0-9A-Fa-f]{2}", raw[i + 1 : i + 3]):
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "replace")
