"""Cross-generation check on measurements the planner was never fitted on.

Run: python scripts/bench_cross_generation_external.py

Reads tests/core/planner/anchors/cross_generation_external.csv (built by
scripts/extract_mlperf_cross_generation.py from the MLPerf Training result logs, plus vendor
statements, each row with its quotes and source). For each pair it runs, per side, exactly
what an outside check runs::

    gpuplan estimate --params P --tokens T --seq-len S --gpu G --gpus N --precision X
        [--method lora] --compare-gpus --json

and takes that side's ``gpu_hours``. The predicted speedup of B over A is
``gpu_hours A / gpu_hours B`` (with equal GPU counts: the time ratio); the measured one is
``minutes A x GPUs A / (minutes B x GPUs B)``. Each side runs at its own precision and its
own tokens (the samples its runs trained to reach the target, times the sequence length):
MLPerf time-to-train includes how many samples each submission needed, so both ratios carry
it. A second figure runs both sides at side A's tokens (one job, as ``--compare-gpus``
reads).

error = |predicted / measured - 1|; worst = max(predicted / measured, measured / predicted).

A pair is not scored when the CLI refuses a side: a precision it does not take (fp4:
"needs fp4", found by trying ``--precision fp4``) or a GPU the spec table lacks. Headline:
the same-round, same-count MLPerf pairs (kind ``mlperf-log``) not marked excluded; the
per-GPU, cross-round and stated rows are shown and summarised apart.

Writes benchmarks/results/cross_generation_external.md (dated). ``--table FILE`` scores
another table of the same columns and only prints its figures: the every-submission check
(``python scripts/extract_mlperf_cross_generation.py --mirror DIR --every-submission --out
FILE``) shows what the selection rules (the fastest submission per GPU, the newest round,
the smallest and largest count) leave out.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from gpuplan.cli.main import main as gpuplan

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests/core/planner/anchors/cross_generation_external.csv"
RESULTS = ROOT / "benchmarks/results/cross_generation_external.md"
DEFAULT_TOKENS = "10B"
"""Tokens for a stated row without per-side sample counts (the ratio does not depend on it
beyond fixed costs)."""
HEADLINE_KIND = "mlperf-log"


@dataclass(frozen=True)
class Side:
    gpu: str
    gpus: int
    precision: str
    tokens: str


@dataclass(frozen=True)
class Pair:
    row: dict[str, str]

    @property
    def a(self) -> Side:
        return self._side("a")

    @property
    def b(self) -> Side:
        return self._side("b")

    def _side(self, key: str) -> Side:
        r = self.row
        return Side(
            r[f"gpu_{key}"],
            int(r[f"gpus_{key}"]),
            r[f"precision_{key}"],
            r[f"tokens_{key}"] or DEFAULT_TOKENS,
        )

    @property
    def measured(self) -> float:
        return float(self.row["measured_speedup"])

    @property
    def label(self) -> str:
        r = self.row
        counts = r["gpus_a"] if r["gpus_a"] == r["gpus_b"] else f"{r['gpus_a']}/{r['gpus_b']}"
        return f"{r['gpu_a']} -> {r['gpu_b']}"[:40] + f" x{counts}"

    @property
    def headline(self) -> bool:
        return self.row["kind"] == HEADLINE_KIND and not self.row["excluded"]


def load_pairs(path: Path = TABLE) -> list[Pair]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [Pair(row) for row in csv.DictReader(handle)]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = gpuplan(argv)
    return code, out.getvalue(), err.getvalue()


def argv_of(pair: Pair, side: Side, tokens: str | None = None) -> list[str]:
    r = pair.row
    argv = [
        "estimate",
        "--params",
        r["params"],
        "--tokens",
        tokens or side.tokens,
        "--seq-len",
        r["seq_len"],
        "--gpu",
        side.gpu,
        "--gpus",
        str(side.gpus),
        "--precision",
        side.precision,
        "--compare-gpus",
        "--json",
    ]
    if r["active_params"]:
        argv += ["--active-params", r["active_params"]]
    if r["experts"]:
        argv += ["--experts", r["experts"], "--top-k", r["top_k"] or "2"]
    if r["method"] in ("lora", "qlora", "full"):
        argv += ["--method", r["method"]]
    return argv


def accepts_fp4() -> bool:
    """Whether the CLI takes ``--precision fp4`` (another change adds it)."""
    probe = "estimate --params 8B --tokens 1B --gpu B200 --gpus 8 --precision fp4"
    code, _, _ = run_cli([*probe.split(), "--compare-gpus", "--json"])
    return code == 0


class Unscored(Exception):
    """A side the CLI will not estimate; the message says why."""


def gpu_hours(pair: Pair, side: Side, tokens: str | None = None) -> tuple[float, float]:
    """(GPU-hours, MFU) the CLI's ``--compare-gpus`` gives one side."""
    code, out, err = run_cli(argv_of(pair, side, tokens))
    if code != 0:
        message = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
        if "--precision" in message and side.precision == "fp4":
            raise Unscored("needs fp4 (the CLI has no --precision fp4 yet)")
        if "unknown GPU" in message:
            raise Unscored(f"{side.gpu} is not in the spec table")
        raise RuntimeError(f"{' '.join(argv_of(pair, side, tokens))}: {message}")
    rows = json.loads(out)["compare"]
    row = next(r for r in rows if r["gpu"] == side.gpu)
    if not row["feasible"]:
        raise Unscored(f"{side.gpu} x{side.gpus} infeasible: {'; '.join(row['reasons'])}")
    return float(row["gpu_hours"]), float(row["mfu"])


@dataclass(frozen=True)
class Scored:
    pair: Pair
    predicted: float | None
    """Predicted speedup of B over A, each side at its own tokens; None when unscored."""
    predicted_same_tokens: float | None
    skipped: str = ""
    mfu: tuple[float, float] = (0.0, 0.0)

    def ratio(self, same_tokens: bool = False) -> float:
        value = self.predicted_same_tokens if same_tokens else self.predicted
        assert value is not None
        return value / self.pair.measured


def score(pair: Pair) -> Scored:
    try:
        (ha, mfu_a), (hb, mfu_b) = gpu_hours(pair, pair.a), gpu_hours(pair, pair.b)
        same, _ = gpu_hours(pair, pair.b, pair.a.tokens)
    except Unscored as why:
        return Scored(pair, None, None, str(why))
    return Scored(pair, ha / hb, ha / same, mfu=(mfu_a, mfu_b))


def score_all(pairs: list[Pair] | None = None) -> list[Scored]:
    return [score(p) for p in (load_pairs() if pairs is None else pairs)]


def errors(scored: list[Scored], same_tokens: bool = False) -> tuple[int, float, float]:
    """(pairs, median |p/m - 1|, worst max(p/m, m/p)) over the scored pairs."""
    ratios = [s.ratio(same_tokens) for s in scored if s.predicted is not None]
    if not ratios:
        return 0, float("nan"), float("nan")
    return (
        len(ratios),
        statistics.median(abs(x - 1) for x in ratios),
        max(max(x, 1 / x) for x in ratios),
    )


def headline(scored: list[Scored]) -> list[Scored]:
    return [s for s in scored if s.pair.headline and s.predicted is not None]


def summary(name: str, part: list[Scored]) -> str:
    n, median, worst = errors(part)
    if not n:
        return f"| {name} | 0 | | | |"
    _, m2, w2 = errors(part, same_tokens=True)
    return f"| {name} | {n} | {median:.1%} | {worst:.2f}x | {m2:.1%} / {w2:.2f}x |"


def table(scored: list[Scored]) -> list[str]:
    lines = [
        "| # | kind | benchmark | GPU A -> B | GPUs | precision A / B | measured | predicted "
        "| pred / meas | same tokens | MFU A / B | status |",
        "|---:|---|---|---|---|---|---:|---:|---:|---:|---|---|",
    ]
    for i, s in enumerate(scored, 1):
        r = s.pair.row
        counts = r["gpus_a"] if r["gpus_a"] == r["gpus_b"] else f"{r['gpus_a']} / {r['gpus_b']}"
        if s.predicted is None:
            predicted = ratio = same = mfu = ""
            status = f"not scored: {s.skipped}"
        else:
            predicted = f"{s.predicted:.2f}"
            ratio = f"{s.ratio():.2f}"
            same = f"{s.ratio(same_tokens=True):.2f}"
            mfu = f"{s.mfu[0]:.2f} / {s.mfu[1]:.2f}"
            status = "excluded: " + r["excluded"].split(":")[0] if r["excluded"] else "scored"
        lines.append(
            f"| {i} | {r['kind']} | {r['benchmark'].replace('MLPerf Training ', '')} "
            f"| {r['gpu_a']} -> {r['gpu_b']} | {counts} "
            f"| {r['precision_a']} / {r['precision_b']} | {s.pair.measured:.2f} "
            f"| {predicted} | {ratio} | {same} | {mfu} | {status} |"
        )
    return lines


def by_gpu_pair(scored: list[Scored]) -> list[str]:
    groups: dict[str, list[Scored]] = defaultdict(list)
    for s in headline(scored):
        groups[f"{s.pair.row['gpu_a']} -> {s.pair.row['gpu_b']}"].append(s)
    lines = [
        "| GPU pair | pairs | measured | predicted | pred / meas (median) | median error |",
        "|---|---:|---|---|---:|---:|",
    ]
    for name, part in sorted(groups.items()):
        measured = [s.pair.measured for s in part]
        predicted = [s.predicted for s in part if s.predicted is not None]
        n, median, _ = errors(part)
        lines.append(
            f"| {name} | {n} | {min(measured):.2f}-{max(measured):.2f}x "
            f"| {min(predicted):.2f}-{max(predicted):.2f}x "
            f"| {statistics.median(s.ratio() for s in part):.2f} | {median:.1%} |"
        )
    return lines


def misses(scored: list[Scored], count: int = 8) -> list[str]:
    ranked = sorted(
        (s for s in scored if s.predicted is not None),
        key=lambda s: -max(s.ratio(), 1 / s.ratio()),
    )
    return [
        f"- {s.pair.row['benchmark']}, {s.pair.label}, {s.pair.row['precision_a']} / "
        f"{s.pair.row['precision_b']}: measured {s.pair.measured:.2f}x, predicted "
        f"{s.predicted:.2f}x (x{s.ratio():.2f})"
        for s in ranked[:count]
    ]


def report(scored: list[Scored], fp4: bool) -> list[str]:
    skipped: dict[str, int] = defaultdict(int)
    for s in scored:
        if s.predicted is None:
            skipped[s.skipped] += 1
    kinds = sorted({s.pair.row["kind"] for s in scored})
    lines = [
        f"{len(scored)} pairs in `tests/core/planner/anchors/cross_generation_external.csv`; "
        f"the CLI {'takes' if fp4 else 'does not take'} `--precision fp4`.",
        "",
        "| set | pairs scored | median error | worst | same tokens: median / worst |",
        "|---|---:|---:|---:|---:|",
        summary("headline: MLPerf, same round and GPU count, not excluded", headline(scored)),
    ]
    for kind in kinds:
        if kind != HEADLINE_KIND:
            lines.append(summary(kind, [s for s in scored if s.pair.row["kind"] == kind]))
    lines += [
        summary(
            "excluded (see the row's reason)",
            [s for s in scored if s.pair.row["excluded"]],
        ),
        summary("every scored row", scored),
        "",
        "Not scored: "
        + ("; ".join(f"{why} ({n})" for why, n in sorted(skipped.items())) or "none")
        + ".",
        "",
        "By GPU pair (headline set):",
        "",
        *by_gpu_pair(scored),
        "",
        "Largest misses (every scored row):",
        "",
        *misses(scored),
        "",
        *table(scored),
    ]
    return lines


def check_table(path: Path) -> int:
    """Score another table (``--table``, e.g. every submission pair from
    ``extract_mlperf_cross_generation.py --every-submission``) and print its figures; the
    rows whose precision the logs do not say are left out. Writes nothing."""
    pairs = [p for p in load_pairs(path) if "unknown" not in (p.a.precision, p.b.precision)]
    scored = score_all(pairs)
    lines = report(scored, accepts_fp4())
    lines[0] = f"{len(scored)} pairs in {path} with a precision on both sides."
    print("\n".join([*lines[:12], "", "Largest misses:", "", *misses(scored)]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, help="score this table instead; write nothing")
    args = parser.parse_args(argv)
    if args.table:
        return check_table(args.table)
    fp4 = accepts_fp4()
    scored = score_all()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    block = [
        *report(scored, fp4),
        "",
        f"Written by `python scripts/bench_cross_generation_external.py` on {stamp} "
        "(bundled catalog). Predicted speedup: the CLI's `--compare-gpus` `gpu_hours` of A "
        "over B, each side at its own precision and tokens; `same tokens`: pred / meas with "
        "both sides at A's tokens. Measured: MLPerf time to train (olympic mean of the "
        "logged runs) x GPUs, A over B, or the stated ratio.",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        "# Cross-generation check on external measurements\n\n" + "\n".join(block) + "\n",
        encoding="utf-8",
    )
    for s in scored:
        if s.predicted is None:
            print(f"skipped: {s.pair.row['benchmark']}, {s.pair.label}: {s.skipped}")
    print("\n".join(block[:20]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
