"""``gpuplan exporter``: publish gpuplan's figures to Prometheus, from the ledger.

Three outputs of the same scrape: ``--listen HOST:PORT`` serves ``/metrics`` until
stopped (a Deployment beside the scheduled job); ``--textfile FILE.prom`` writes one
scrape for node_exporter's textfile collector and exits (run it after each scheduled
job: nothing to keep alive); with neither, the scrape is printed (``--json``: the
families as JSON). No cloud is called: what is published is what the runs recorded.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gpuplan.cli.common import add_catalog_dir, add_db, check_catalog_env
from gpuplan.core.errors import InputError

if TYPE_CHECKING:
    from gpuplan.usecases.audit.exporter import LedgerCollector

DEFAULT_PORT = 9877
MAX_TEAM_LABEL = 128


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "exporter",
        help="publish idle GPUs, waste $/h, budget burn and runs to Prometheus, from the ledger",
        description="Publish the ledger's figures in the Prometheus text format: idle, busy "
        "and unknown GPUs and dollars per hour by policy, cloud, account, team and verdict; "
        "budget month-to-date, forecast and limit; the latest run of each kind (when, "
        "result, actions); catalog price ages. Reads the ledger on every scrape; calls no "
        "cloud. Metric names and labels: docs/exporter.md.",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--listen",
        metavar="HOST:PORT",
        type=_listen,
        help=f"serve /metrics here until stopped (e.g. 127.0.0.1:{DEFAULT_PORT}, "
        f"0.0.0.0:{DEFAULT_PORT} in a container)",
    )
    where.add_argument(
        "--textfile",
        metavar="FILE.prom",
        type=_textfile,
        help="write one scrape to this file atomically for node_exporter's textfile "
        "collector, then exit",
    )
    where.add_argument("--json", action="store_true", help="print the families as JSON")
    p.add_argument(
        "--team-label",
        default="team",
        type=_team_label,
        help="the instance tag/label whose value is the `team` label (default: team)",
    )
    add_db(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    number = int(port)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {number}")
    return host.strip("[]"), number


def _textfile(text: str) -> Path:
    path = Path(text)
    if path.suffix != ".prom":
        raise argparse.ArgumentTypeError(
            f"node_exporter's textfile collector reads only *.prom files, got {text!r}"
        )
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{path.parent}: not an existing folder")
    return path


def _team_label(text: str) -> str:
    if len(text) > MAX_TEAM_LABEL or not text.isprintable():
        raise argparse.ArgumentTypeError(
            f"expected a tag name of at most {MAX_TEAM_LABEL} printable characters"
        )
    return text


def run(args: argparse.Namespace) -> int:
    from gpuplan.usecases.audit import exporter

    check_catalog_env()
    collector = exporter.LedgerCollector(
        args.db, os.environ, team_label=args.team_label, catalog_dir=args.catalog_dir
    )
    if args.textfile is not None:
        exporter.write_textfile(collector, args.textfile)
        print(f"wrote {args.textfile}", file=sys.stderr)
        return 0
    if args.listen is not None:
        return _serve(collector, *args.listen)
    if args.json:
        from gpuplan.cli.render import print_json

        print_json(exporter.families_json(collector))
        return 0
    sys.stdout.write(exporter.exposition_text(collector))
    return 0


def _serve(collector: LedgerCollector, host: str, port: int) -> int:
    import signal
    import threading

    from gpuplan.usecases.audit.exporter import serve

    try:
        server, _thread = serve(collector, host, port)
    except OSError as exc:
        raise InputError(f"--listen {host}:{port}: {exc.strerror or exc}") from None
    bound = server.server_address[1]
    print(f"serving http://{host}:{bound}/metrics (Ctrl-C or SIGTERM stops)", file=sys.stderr)
    sys.stderr.flush()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    finally:
        server.shutdown()
        server.server_close()
    return 0
