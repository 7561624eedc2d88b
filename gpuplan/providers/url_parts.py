"""The one URL parser of gpuplan's http(s) URLs: httpx's, the parser that fetches them.

A URL is split here by httpx's URL parser and its parts (:class:`gpuplan.core.urls.Url`)
are judged by the pure core (:func:`gpuplan.core.urls.checked`): ``policy check`` (the
loader gets :func:`split_url` from the use case), every fetch (:mod:`gpuplan.providers.http`)
and every redacted message split a string the same way, so what the check accepts is
what gets fetched, and the host judged is the host connected to: the ASCII host httpx
sends (an IDN in its ``xn--`` form, IPv6 without brackets), the port it connects to
(None for the scheme's default), the path as it goes on the wire.

The split is httpx's own parser, ``httpx._urlparse.urlparse``: the function
``httpx.URL(text)`` calls, nothing else. Where httpx is not loaded yet (a dry run, ``policy
check``, ``gpuplan estimate --policy``) that one module (and its exceptions) is loaded from
httpx's files on its own, ~15 ms instead of the client's ~100 ms, so a command that
fetches nothing still never loads httpx; where httpx is loaded, its module is used.
Either way it is the same code on the same string: the fetch path's ``httpx.URL`` and
the check's parts cannot disagree (``tests/providers/test_url_parts.py`` checks it).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gpuplan.core.urls import Url, checked, precheck, redacted, redacted_webhook

if TYPE_CHECKING:
    import httpx

_PRIVATE = "_gpuplan_httpx_urlparse"
"""The name httpx's parser module is loaded under when httpx itself is not loaded."""
_INVALID = (
    ("port", "URL port must be a number from 1 to 65535"),
    ("IPv6", "URL host in brackets is not an IPv6 address"),
    ("IPv4", "URL host looks like an IP address but is not four decimal octets"),
    ("IDNA", "URL host is not a valid host name or IP address"),
)


def split_url(text: str) -> Url:
    """The parts of ``text`` as httpx fetches it, judged by the core; ValueError (a
    message that does not quote the URL) when it is refused."""
    precheck(text)
    parser = parser_module()
    try:
        found = parser.urlparse(text)
    except parser.InvalidURL as exc:
        raise ValueError(_invalid(str(exc))) from None
    return checked(
        Url(
            scheme=found.scheme,
            userinfo=found.userinfo or None,
            host=found.host,
            port=found.port,
            path=found.path,
            query=found.query or None,
            fragment=found.fragment or None,
        )
    )


def target_of(text: str) -> tuple[httpx.URL, Url]:
    """``text`` as the ``httpx.URL`` a call fetches and its judged parts; ValueError."""
    import httpx

    parts = split_url(text)  # httpx is loaded now: its own parser module splits
    try:
        return httpx.URL(text), parts
    except httpx.InvalidURL as exc:  # pragma: no cover - the same parser refused it above
        raise ValueError(_invalid(str(exc))) from None


def parser_module() -> Any:
    """httpx's URL parser module (``urlparse``, ``InvalidURL``): httpx's own when httpx is
    loaded, else the same file loaded alone under a private name (see the docstring)."""
    if "httpx" in sys.modules:
        return importlib.import_module("httpx._urlparse")
    loaded = sys.modules.get(f"{_PRIVATE}._urlparse")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("httpx")  # finds the files, runs nothing of httpx
    if spec is None or not spec.submodule_search_locations:
        return importlib.import_module("httpx._urlparse")
    package = ModuleType(_PRIVATE)
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = importlib.machinery.ModuleSpec(_PRIVATE, None, is_package=True)
    package.__spec__.submodule_search_locations = package.__path__
    sys.modules[_PRIVATE] = package
    return importlib.import_module(f"{_PRIVATE}._urlparse")


def _invalid(message: str) -> str:
    """httpx's complaint without the part it quotes (which may be a secret)."""
    for needle, said in _INVALID:
        if needle in message:
            return said
    return "not a valid URL"


def redact_url(text: str) -> str:
    """``text`` safe to print, log or store; ``<unparsable URL>`` when it is refused."""
    try:
        return redacted(split_url(text))
    except ValueError:
        return "<unparsable URL>"


def redact_webhook(text: str) -> str:
    """A webhook URL's origin only (its whole path is the secret); ``<webhook>`` when
    it is refused."""
    try:
        return redacted_webhook(split_url(text))
    except ValueError:
        return "<webhook>"
