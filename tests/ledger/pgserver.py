"""A real PostgreSQL server for the tests: initdb in a temp dir, 127.0.0.1, a free port.

The server binaries come from the distribution's package (``.ci/run`` installs it when
``initdb`` is missing): ``initdb`` on PATH, else the newest
``/usr/lib/postgresql/*/bin``. PostgreSQL refuses to run as root, so under uid 0 the
server runs as the ``postgres`` OS user (the package creates it) or ``nobody``.

Authentication is the production shape: TCP needs a password (scram-sha-256) for the
unprivileged ``gpuplan`` role; only the admin connection over the unix socket in the
temp dir is trusted. Missing binaries are a test failure with a readable line, never
a skip: a suite that silently skips its database tests proves nothing.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROLE = "gpuplan"
PASSWORD = "Pw-7f3c9a1e-secret"  # distinctive: the tests grep every output for it


class ServerMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def server_bin() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    found = shutil.which("initdb")
    if found:
        folder = Path(os.path.realpath(found)).parent
        if (folder / "pg_ctl").exists() and (folder / "postgres").exists():
            return folder

    def version(path: str) -> float:
        try:
            return float(Path(path).parent.parent.name)
        except ValueError:
            return 0.0

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if candidates:
        return Path(candidates[-1]).parent
    raise ServerMissing(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or in "
        "/usr/lib/postgresql/*/bin: install the distribution's server package "
        "(apt-get install -y postgresql; .ci/run does this) to run the PostgreSQL ledger tests"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_user() -> pwd.struct_passwd | None:
    """The OS user to run the server as; None: ourselves (not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise ServerMissing("running as root and neither a 'postgres' nor a 'nobody' user exists")


@dataclass
class PgServer:
    root: Path
    port: int
    bin: Path
    user: pwd.struct_passwd | None

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def dsn(self, database: str, *, password: bool = False) -> str:
        auth = f"{ROLE}:{PASSWORD}" if password else ROLE
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` as the superuser over the trusted unix socket; psql's output."""
        out = self._run(
            [str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-h", str(self.socket_dir), "-p", str(self.port), "-U", "postgres",
             "-d", database, "-c", sql],
        )  # fmt: skip
        return out.strip()

    def dump(self, database: str) -> str:
        """Every row and every object of ``database`` as pg_dump writes them."""
        return self._run(
            [str(self.bin / "pg_dump"), "-h", str(self.socket_dir), "-p", str(self.port),
             "-U", "postgres", "--inserts", database],
        )  # fmt: skip

    def _run(self, argv: list[str]) -> str:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            user=self.user.pw_uid if self.user else None,
            group=self.user.pw_gid if self.user else None,
            extra_groups=[] if self.user else None,
            cwd=self.root,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout


@contextlib.contextmanager
def pg_server() -> Iterator[PgServer]:
    """Start a throw-away server; stop it and remove its folder on the way out."""
    folder = server_bin()
    user = _server_user()
    # The server user must reach the folder: under root, /tmp (not a private TMPDIR).
    root = Path(tempfile.mkdtemp(prefix="gpuplan-pg-", dir="/tmp" if user else None))
    server = PgServer(root, _free_port(), folder, user)
    (root / "sock").mkdir()
    (root / "pwfile").write_text(PASSWORD + "\n", encoding="utf-8")
    if user is not None:
        for path in (root, root / "sock", root / "pwfile"):
            os.chown(path, user.pw_uid, user.pw_gid)
    started = False
    try:
        server._run(
            [str(folder / "initdb"), "-D", str(root / "data"), "-U", "postgres",
             "-E", "UTF8", "--no-locale", "--auth-local=trust",
             "--auth-host=scram-sha-256", f"--pwfile={root / 'pwfile'}", "--no-sync"],
        )  # fmt: skip
        options = (
            f"-h 127.0.0.1 -p {server.port} -k {root / 'sock'} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        server._run(
            [str(folder / "pg_ctl"), "-D", str(root / "data"), "-l", str(root / "log"),
             "-w", "-t", "60", "-o", options, "start"],
        )  # fmt: skip
        started = True
        server.admin(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
        yield server
    finally:
        if started:
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                server._run(
                    [str(folder / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate",
                     "-w", "stop"],
                )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)
