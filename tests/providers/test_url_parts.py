"""One URL parser: ``policy check`` and every fetch split a URL with httpx's parser.

Strings on which RFC 3986 hand-splitting, WHATWG browsers and httpx disagree
(backslashes, ``@`` in user info or path, ``#``, whitespace, IPv6 zone ids, uppercase
schemes, percent-encoded and non-ASCII hosts, decimal, octal and hex IPv4, trailing
dots): each is refused or accepted the same way when a policy is checked and when the
URL is fetched, and the guards (link-local/metadata, private address) judge the host
httpx connects to. The fetch goes to httpx's transport hook (``MockTransport``): no
socket is opened.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpuplan.providers import http
from gpuplan.providers.http import HttpError, Limits, request
from gpuplan.providers.url_parts import split_url
from gpuplan.usecases.policy import check_policy

BASE = "version: 1\nname: t\nscope: {}\n"
PUBLIC = "93.184.215.14"

# (url, accepted): what a Prometheus URL (any policy URL: the link-local rule) gets.
CASES = [
    ("http://a\\b@good.example/", True),  # backslash in user info: host good.example
    ("http://evil.example\\@good.example/", True),  # WHATWG: host evil.example
    ("http://169.254.169.254\\@good.example/", True),  # the metadata address is user info
    ("http://good.example\\@169.254.169.254/", False),  # ... and here the host
    ("http://169.254.169.254\\.good.example/", False),  # a backslash in a host name
    ("http://a@b@good.example/", True),  # '@' in user info: the last '@' ends it
    ("http://a@169.254.169.254@good.example/", True),
    ("http://good.example@169.254.169.254/", False),
    ("http://good.example/p@169.254.169.254", True),  # '@' in the path
    ("http://good.example#@169.254.169.254/", True),  # a fragment
    ("http://good.example?@169.254.169.254/", True),  # a query
    ("http://good.example /x", False),  # whitespace
    ("http://[fe80::1%25eth0]/", False),  # an IPv6 zone id
    ("http://[2001:db8::1%25eth0]/", False),
    ("HTTP://GOOD.EXAMPLE/", True),  # uppercase scheme and host
    ("HTTP://169.254.169.254/", False),
    ("http://ex%61mple.com/", False),  # a percent-encoded host
    ("http://%31%36%39.254.169.254/", False),
    ("http://[::ffff:169.254.169.254]/", False),  # IPv4-mapped IPv6
    ("http://[::ffff:a9fe:a9fe]/", False),
    ("http://[fd00:ec2::254]/", False),  # AWS's IPv6 metadata address
    ("http://2852039166/", False),  # 169.254.169.254 in decimal
    ("http://0251.0376.0251.0376/", False),  # ... in octal
    ("http://0xa9.0xfe.0xa9.0xfe/", False),  # ... in hex
    ("http://169.254.43518/", False),
    ("http://169.254.169.254./", False),  # a trailing dot: the resolver drops it
    ("http://169.254.169.254\u3002/", False),  # an ideographic full stop: IDNA makes it '.'
    ("http://good.example./", True),
    ("http://b\u00fccher.example/", True),  # IDN: fetched (and judged) as xn--bcher-kva
    ("http://\uff11\uff16\uff19.254.169.254/", False),  # fullwidth digits
    ("http://good.example:/x", True),  # an empty port is the default port
    ("http://good.example:0080/x", True),
    ("http://good.example:99999/x", False),
    ("http://[::1/x", False),
    ("http:/good.example/x", False),  # no authority
    ("file:///etc/passwd", False),
]


class Wire:
    """httpx's transport hook: records each request's URL and answers 200."""

    def __init__(self) -> None:
        self.urls: list[httpx.URL] = []
        self.client = httpx.Client(transport=httpx.MockTransport(self._answer))

    def _answer(self, sent: httpx.Request) -> httpx.Response:
        self.urls.append(sent.url)
        return httpx.Response(200, json={})


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[Wire]:
    found = Wire()
    monkeypatch.setattr(http, "client", lambda trust_env, pinned="": found.client)
    yield found
    found.client.close()


def _check(tmp_path: Path, body: str) -> tuple[str, ...]:
    path = tmp_path / "p.yaml"
    path.write_text(BASE + body, encoding="utf-8")
    return check_policy(path).problems


def _quoted(url: str) -> str:
    return "'" + url.replace("'", "''") + "'"


@pytest.mark.parametrize(("url", "accepted"), CASES)
def test_what_policy_check_accepts_is_what_gets_fetched(
    url: str, accepted: bool, tmp_path: Path, wire: Wire
) -> None:
    prometheus = (
        f"idle: {{allow_data_loss: false, metrics: {{prometheus: {{url: {_quoted(url)}}}}}}}\n"
    )
    problems = _check(tmp_path, prometheus)
    assert (not problems) is accepted, problems
    try:
        request("GET", url, limits=Limits(attempts=1))
    except HttpError:
        assert not wire.urls and not accepted
        return
    assert accepted and len(wire.urls) == 1
    parts, fetched = split_url(url), wire.urls[0]
    assert fetched.raw_host.decode("ascii") == parts.host.strip("[]")
    assert fetched.port == parts.port and fetched.scheme == parts.scheme
    assert fetched.userinfo.decode("ascii") == (parts.userinfo or "")


WEBHOOKS = [
    ("https://hooks.example.com/s", True),
    ("https://10.0.0.5\\@hooks.example.com/s", True),
    ("https://hooks.example.com\\@10.0.0.5/s", False),
    ("https://u@10.0.0.5@hooks.example.com/s", True),
    ("https://hooks.example.com#@10.0.0.5/", True),
    ("https://10.0.0.5./s", False),  # the old splitter took '10.0.0.5.' for a public name
    ("https://[::ffff:10.0.0.5]/s", False),
    ("https://167772165/s", False),  # 10.0.0.5 in decimal
    ("https://hooks.internal./s", False),
    ("HTTPS://HOOKS.EXAMPLE.COM:/s", True),
]


@pytest.mark.parametrize(("url", "accepted"), WEBHOOKS)
def test_the_private_address_guard_judges_the_host_httpx_connects_to(
    url: str, accepted: bool, tmp_path: Path, wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    problems = _check(tmp_path, f"notify: {{webhook_url: {_quoted(url)}}}\n")
    assert (not problems) is accepted, problems
    looked_up: list[str] = []

    def resolve(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        looked_up.append(host)
        try:  # an IP literal resolves to itself (as the resolver does), a name to PUBLIC
            address = str(ipaddress.ip_address(host.rstrip(".")))
        except ValueError:  # ... or, under a private suffix, to a private address
            address = "10.1.2.3" if host.rstrip(".").endswith(".internal") else PUBLIC
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    limits = Limits(attempts=1, public_only=True, hide_path=True, idempotent=False)
    try:
        request("POST", url, limits=limits, json_body={})
    except HttpError:
        assert not wire.urls and not accepted
        return
    assert accepted and looked_up == [split_url(url).host] and wire.urls[0].host == PUBLIC


def test_the_parser_is_httpx_own_and_checking_does_not_load_httpx() -> None:
    """``policy check`` splits with httpx's parser module loaded alone (the dry run and
    ``estimate --policy`` stay free of the client); with httpx loaded, its own module."""
    code = (
        "import sys\n"
        "from gpuplan.providers.url_parts import parser_module, split_url\n"
        "print(split_url('HTTP://B\\u00fccher.example:/p').host, 'httpx' in sys.modules)\n"
        "import httpx\n"
        "print(parser_module().urlparse is sys.modules['httpx._urlparse'].urlparse)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=dict(os.environ)
    )
    assert done.stdout.split("\n")[:2] == ["xn--bcher-kva.example False", "True"], done.stderr


def test_estimate_with_a_policy_url_does_not_load_httpx(tmp_path: Path) -> None:
    """``estimate --policy`` checks the policy's webhook with httpx's parser alone."""
    path = tmp_path / "p.yaml"
    path.write_text(BASE + "notify: {webhook_url: 'https://hooks.example.com/x'}\n")
    code = (
        "import sys\n"
        "from gpuplan.cli.main import main\n"
        f"argv = ['estimate', '--params', '7B', '--tokens', '1T', '--policy', {str(path)!r}]\n"
        "code = main(argv)\n"
        "print(code, 'httpx' in sys.modules, '_gpuplan_httpx_urlparse._urlparse' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=dict(os.environ)
    )
    assert done.stdout.strip().splitlines()[-1] == "0 False True", done.stderr


@pytest.mark.parametrize(("url", "accepted"), CASES)
def test_the_parts_are_those_of_the_httpx_url_fetched(url: str, accepted: bool) -> None:
    try:
        parts = split_url(url)
    except ValueError:
        assert not accepted
        return
    target = httpx.URL(url)
    assert (parts.scheme, parts.host.strip("[]"), parts.port) == (
        target.scheme,
        target.raw_host.decode("ascii"),
        target.port,
    )
    assert (parts.path or "/") == target.raw_path.decode("ascii").partition("?")[0]
    assert (parts.query or "") == target.query.decode("ascii")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (
            "https://prices.azure.com:443/api/retail/prices?$skip=100",
            "https://prices.azure.com/api",
            True,
        ),
        ("http://h:80/x", "http://h/y", True),
        ("https://h:8443/x", "https://h/x", False),
        ("http://h:443/x", "https://h/x", False),
        ("https://H.example:443/", "https://h.example/", True),
    ],
)
def test_origins_normalise_default_ports(a: str, b: str, same: bool) -> None:
    assert (split_url(a).origin() == split_url(b).origin()) is same
