"""Sweep (not a test) of hostile inputs over every command, as fresh processes.

What an outside check does to gpuplan: each case runs ``gpuplan ...`` in a new process
with stdin from ``/dev/zero``, a wall-clock limit, the cloud replaced by
``GPUPLAN_FAKE_FLEET`` and a secret in the environment. A case fails when the process
prints a traceback, runs past the limit (a hang), exits with another code than the case
expects (2 for bad input), or prints the secret. The cases are the fuzz suite's fixed
corpus (``tests/e2e/fuzz``): every file-taking option x every kind of hostile file, every
bad policy x every policy command, bad job files, trace folders and catalog files, and
every value option x NaN, infinity, 1e400, huge integers and -1; and the inputs of issue
28 items 4-9 and issue 26 item 4 (``tests/e2e/fuzz/issue_cases.py``: secrets next to a
mistyped flag, Unicode digits, symlink loops, a 5,000-digit ``gpus.toml``, a billion-laughs
job file, a blank value for every option of every command, control characters, a
50,000-region policy, the TUI's options, bare durations and absurd values). A case also
fails when a raw escape character reaches the output (``control``).

Run: ``python scripts/hostile_sweep.py [--limit-s 20] [--write]`` from the repository
root; ``--write`` records the counts in ``benchmarks/results/hostile_sweep.md``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuplan.core.wording import redact_secrets  # noqa: E402
from tests.e2e.fuzz import corpus, issue_cases  # noqa: E402
from tests.e2e.fuzz.test_hostile_files import DB_COMMANDS, FILE_KINDS, FILE_OPTIONS  # noqa: E402
from tests.e2e.fuzz.test_numbers import CASES, MUST_REFUSE, PREFIX, VALUES  # noqa: E402

SECRET = "sweep-secret-never-printed"
SECRETS = (SECRET, issue_cases.SECRET)
Case = tuple[list[str], tuple[int, ...]]


def cases(root: Path) -> list[Case]:
    files = corpus.bad_files(root)
    policies = corpus.bad_policies(root)
    jobs = corpus.bad_job_files(root)
    traces = corpus.bad_trace_dirs(root)
    good = root / "good.yaml"
    good.write_text(corpus.VALID_POLICY, encoding="utf-8")
    out: list[Case] = []
    out += [(make(str(files[k])), (2,)) for make in FILE_OPTIONS.values() for k in FILE_KINDS]
    out += [(make(str(files[k])), (1, 2)) for make in DB_COMMANDS.values()
            for k in ("dev-zero", "fifo", "folder", "huge-sparse")]  # fmt: skip
    policy_commands = ("policy-check", "policy-show", "budget", "stop-idle", "fleet")
    out += [(FILE_OPTIONS[c](str(p)), (2,)) for p in policies.values() for c in policy_commands]
    out += [(["estimate", "--job", str(p)], (2,)) for p in jobs.values()]
    out += [
        (["simulate", "--policy", str(good), "--traces", str(t)], (2,)) for t in traces.values()
    ]
    for command, name in CASES:
        strict = (" ".join(command), name) in MUST_REFUSE
        for value in VALUES:
            argv = [*command, *PREFIX.get(command, []), name, value]
            out.append((argv, (2,) if strict or len(value) > 4096 else (0, 1, 2)))
    issue_cases.write_inputs(root)
    out += [(list(c.argv), c.allowed) for c in issue_cases.cases(root)]
    return out


def run(
    argv: list[str], allowed: tuple[int, ...], env: dict[str, str], limit_s: float, cwd: Path
) -> str:
    """``ok``, ``traceback``, ``hang``, ``exit``, ``secret`` or ``control``."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gpuplan.cli.main", *argv],
            stdin=subprocess.DEVNULL if "/dev/stdin" in argv else open("/dev/zero", "rb"),  # noqa: SIM115
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            timeout=limit_s,
            cwd=cwd,  # the temporary folder: a case that writes a file by mistake litters it
        )
    except subprocess.TimeoutExpired:
        return "hang"
    text = done.stdout + done.stderr
    if "Traceback (most recent call last)" in text:
        return "traceback"
    if any(s in text for s in SECRETS):
        return "secret"
    if "\x1b" in text or "\x07" in text:
        return "control"
    return "ok" if done.returncode in allowed else "exit"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-s", type=float, default=20.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "GPUPLAN_FAKE_FLEET": str(corpus.fake_fleet(root)),
               "GPUPLAN_DB": str(root / "ledger.sqlite3"), "XDG_DATA_HOME": str(root / "xdg"),
               "AWS_SECRET_ACCESS_KEY": SECRET}  # fmt: skip
        env.pop("GPUPLAN_CATALOG_DIR", None)
        all_cases = cases(root)
        tally: Counter[str] = Counter()
        failures: list[str] = []
        started = time.monotonic()
        for argv, allowed in all_cases:
            verdict = run(argv, allowed, env, args.limit_s, root)
            tally[verdict] += 1
            if verdict != "ok":
                shown = " ".join(redact_secrets(ascii(a)[1:-1])[:60] for a in argv)
                print(f"{verdict}: gpuplan {shown}", file=sys.stderr)
                failures.append(f"{verdict}: `gpuplan {shown}`")
        seconds = time.monotonic() - started
    line = (
        f"{len(all_cases)} cases in {seconds:.0f} s: {tally['ok']} ok, {tally['traceback']} "
        f"tracebacks, {tally['hang']} hangs, {tally['exit']} wrong exit codes, "
        f"{tally['secret']} secrets printed, {tally['control']} raw control characters"
    )
    print(line)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "hostile_sweep.md"
        out.write_text(
            "# Hostile-input sweep (scripts/hostile_sweep.py)\n\n"
            f"{datetime.now(UTC):%Y-%m-%d}, {os.cpu_count()} CPUs, fresh process per case, "
            f"limit {args.limit_s:g} s, stdin /dev/zero:\n\n{line}.\n"
            + "".join(f"\n- {f}" for f in failures)
            + ("\n" if failures else ""),
            encoding="utf-8",
        )
    return 0 if tally["ok"] == len(all_cases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
