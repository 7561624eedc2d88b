"""Runs documented commands as a reader would: in bash, from the repository root, one
shell per session (so ``export`` and ``unset`` carry to the next command), each
command's output, errors and exit code kept apart.

What differs from a reader's machine, and nothing else: ``gpuplan`` is this venv's; HOME
and the XDG folders are fresh temp folders (a user catalog or ledger never leaks in); a
literal ``/tmp/`` in a command is this session's own temp folder (parallel test runs do
not share a file); every Python process started gets a guard (``sitecustomize``) that
refuses to resolve or connect to anything but loopback and logs what it refused; stdin
is empty and the terminal is 200 columns wide (``COLUMNS``), whatever the developer's.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.docs.examples import REPO, Command

NET_LOG_ENV = "GPUPLAN_DOCS_NET_LOG"

_GUARD = '''\
"""Test guard (tests/docs/runner.py): loopback only, refusals logged."""
import ipaddress, os, socket

_connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo


def _loopback(host):
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _refuse(what):
    log = os.environ.get("@ENV@")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(what + "\\n")
    raise OSError(f"docs example tried to reach {what}: only loopback is allowed")


def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
        _refuse(str(address[0]))
    return _connect(self, address)


def getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and not _loopback(name):
        _refuse(str(name))
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.getaddrinfo = getaddrinfo
'''.replace("@ENV@", NET_LOG_ENV)


@dataclass(frozen=True)
class Result:
    command: Command
    ran: bool
    """False: on the allow-list (``claims.NOT_RUN``)."""
    exit: int
    stdout: str
    stderr: str
    refused: tuple[str, ...]
    """Hosts beyond loopback it tried to reach (the guard refused them)."""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_session(
    commands: Sequence[Command],
    skip: set[str],
    env: Mapping[str, str],
    scratch: Path,
    timeout: float = 300,
) -> list[Result]:
    """Run ``commands`` in one bash, in order; those whose text is in ``skip`` are not run."""
    scratch.mkdir(parents=True, exist_ok=True)
    guard = scratch / "guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(_GUARD, encoding="utf-8")
    home = scratch / "home"
    tmp = scratch / "tmp"
    for folder in (home, tmp):
        folder.mkdir(exist_ok=True)
    lines = [f"cd {shlex.quote(str(REPO))}"]
    for index, command in enumerate(commands):
        if command.text in skip:
            continue
        out = scratch / f"{index}"
        source = command.source.replace("/tmp/", f"{tmp}/")
        lines += [
            f"export {NET_LOG_ENV}={shlex.quote(str(out))}.net",
            "{ " + source,
            f"}} > {out}.out 2> {out}.err < /dev/null",
            f"echo $? > {out}.rc",
        ]
    base = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PYTHONPATH": str(guard),
        "LC_ALL": "C.UTF-8",
        "COLUMNS": "200",
        "TMPDIR": str(tmp),
    }
    subprocess.run(
        ["bash", "-c", "\n".join(lines)],
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    results: list[Result] = []
    for index, command in enumerate(commands):
        out = scratch / f"{index}"
        if command.text in skip:
            results.append(Result(command, False, 0, "", "", ()))
            continue
        rc = out.with_suffix(".rc")
        net = Path(f"{out}.net")
        results.append(
            Result(
                command,
                True,
                int(rc.read_text()) if rc.exists() else -1,
                Path(f"{out}.out").read_text(errors="replace"),
                Path(f"{out}.err").read_text(errors="replace"),
                tuple(net.read_text().split()) if net.exists() else (),
            )
        )
    return results
