"""PNG plots of the benchmark results, read from benchmarks/results/*.md; saved in docs/img/.

Reads the tables the ``scripts/bench_*.py`` scripts wrote (it measures nothing itself;
run ``scripts/run_benchmarks.sh`` to re-measure and re-plot) and draws, each stamped
with the date of the results file it came from:

- ``bench-planner-scaling.png``: planner time and peak memory vs catalog size
  (``planner_scaling.md``), log-log, with a linear reference;
- ``bench-api-calls.png``: API calls per stop-idle run / survey vs instances per cloud
  (AWS from ``stop_idle.md``, GCP and Azure from ``cloud_calls.md``);
- ``bench-cli.png``: cold start-up of ``gpuplan estimate`` and ``gpuplan catalog``
  against the bare interpreter, median wall and CPU seconds (``cli.md``);
- ``bench-fleet-core.png``: microseconds per instance of each lifecycle phase on the
  big fake fleet (``fleet_core.md``).

Then it refreshes the block between ``<!-- results:start -->`` and ``<!-- results:end
-->`` in docs/benchmarks.md: every results file with its date, and the main tables of
the start-up, planner-scaling and fleet-core results copied verbatim, so the figures in
the docs are always those a script wrote.

A results file that is missing is reported and its plot skipped.
Run: ``python scripts/plot_benchmarks.py`` (needs the ``docs`` extra: matplotlib).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
IMG = ROOT / "docs" / "img"
DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2} UTC)?")
Table = list[dict[str, str]]


def tables(text: str) -> list[tuple[str, Table]]:
    """Every Markdown table in ``text`` with the last heading above it."""
    out: list[tuple[str, Table]] = []
    heading, header, rows = "", None, []
    for line in [*text.splitlines(), ""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(c) <= set("-: ") for c in cells):
                rows.append(dict(zip(header, cells, strict=False)))
            continue
        if header is not None:
            out.append((heading, rows))
            header, rows = None, []
    return out


def number(cell: str) -> float:
    return float(re.sub(r"[^0-9.eE+-]", "", cell.replace(",", "")))


def read(name: str) -> tuple[str, str] | None:
    """(text, date) of a results file, or None when it is missing."""
    path = RESULTS / name
    if not path.exists():
        print(f"skipped: {path.relative_to(ROOT)} not found", file=sys.stderr)
        return None
    text = path.read_text(encoding="utf-8")
    found = DATE.search(text)
    return text, found.group(0) if found else "undated"


def column(table: Table, prefix: str) -> str:
    """The first column name starting with ``prefix`` (headers carry units and notes)."""
    return next(k for k in table[0] if k.lower().startswith(prefix.lower()))


def save(fig: plt.Figure, name: str, source: str, date: str) -> None:
    fig.text(0.99, 0.01, f"{source}, {date}", ha="right", va="bottom", fontsize=7, alpha=0.7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMG / name, dpi=120)
    plt.close(fig)
    print(f"wrote docs/img/{name} (from {source}, {date})")


def planner_scaling() -> None:
    got = read("planner_scaling.md")
    if got is None:
        return
    text, date = got
    table = next(t for _, t in tables(text) if t and "offers" in t[0])
    offers = [number(r["offers"]) for r in table]
    seconds = [number(r[column(table, "median s")]) for r in table]
    peak = [number(r[column(table, "planning peak")]) for r in table]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.loglog(offers, seconds, "o-", label="planning time (median s)")
    ax.loglog(offers, [seconds[0] * o / offers[0] for o in offers], ":", color="grey")
    ax.set_xlabel("offers in the catalog (1x = bundled)")
    ax.set_ylabel("seconds")
    right: Axes = ax.twinx()
    right.loglog(offers, peak, "s--", color="tab:orange", label="planning peak MiB")
    right.set_ylabel("peak MiB (tracemalloc)")
    lines = ax.get_lines()[:1] + right.get_lines()
    ax.legend(lines, [str(x.get_label()) for x in lines], loc="upper left", fontsize=8)
    ax.set_title("Planner: 7B / 1T over every GPU, count, pricing, region\n(dotted: linear)")
    save(fig, "bench-planner-scaling.png", "benchmarks/results/planner_scaling.md", date)


def api_calls() -> None:
    series: dict[str, tuple[list[float], list[float]]] = {}
    dates: list[str] = []
    aws = read("stop_idle.md")
    if aws is not None:
        table = next(t for _, t in tables(aws[0]) if t and "instances" in t[0])
        calls = column(table, "API calls")
        series["AWS (moto)"] = (
            [number(r["instances"]) for r in table],
            [number(r[calls]) for r in table],
        )
        dates.append(f"stop_idle.md {aws[1]}")
    other = read("cloud_calls.md")
    if other is not None:
        table = next(t for _, t in tables(other[0]) if t and "cloud" in t[0])
        for cloud in dict.fromkeys(r["cloud"] for r in table):
            rows = [r for r in table if r["cloud"] == cloud]
            series[f"{cloud} (wire fake)"] = (
                [number(r["instances"]) for r in rows],
                [number(r["API calls"]) for r in rows],
            )
        dates.append(f"cloud_calls.md {other[1]}")
    if not series:
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, (xs, ys) in series.items():
        ax.loglog(xs, ys, "o-", label=label)
    xs = sorted({x for pair in series.values() for x in pair[0]})
    ax.loglog(xs, xs, ":", color="grey", label="one call per instance")
    ax.set_xlabel("GPU instances per cloud")
    ax.set_ylabel("API calls per run")
    ax.set_title("API calls per stop-idle survey (list + utilisation)")
    ax.legend(fontsize=8)
    save(fig, "bench-api-calls.png", "benchmarks/results", "; ".join(dates))


def cli() -> None:
    got = read("cli.md")
    if got is None:
        return
    text, date = got
    labels, walls, cpus = [], [], []
    for heading, table in tables(text):
        rows = {r[""]: r for r in table if "" in r}
        if "wall s" not in rows:
            continue
        labels.append(heading.strip("`").split("`")[0].replace("gpuplan ", "gpuplan\n", 1))
        walls.append(number(rows["wall s"]["median"]))
        cpus.append(number(rows["CPU s (user+sys)"]["median"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    spots = range(len(labels))
    ax.barh([s + 0.2 for s in spots], walls, height=0.4, label="wall s (median)")
    ax.barh([s - 0.2 for s in spots], cpus, height=0.4, label="CPU s (median)")
    ax.set_yticks(list(spots), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds, cold fresh process")
    ax.set_title("Cold start-up")
    ax.legend(fontsize=8)
    save(fig, "bench-cli.png", "benchmarks/results/cli.md", date)


def fleet_core() -> None:
    got = read("fleet_core.md")
    if got is None:
        return
    text, date = got
    table = next(t for _, t in tables(text) if t and "phase" in t[0])
    names = [r["phase"] for r in table]
    per = [number(r[column(table, "us per instance")]) for r in table]
    fleet = re.search(r"Fleet: ([\d,]+) instances", text)
    count = fleet.group(1) if fleet else "?"
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.barh(names, per)
    ax.invert_yaxis()
    ax.set_xlabel("microseconds per instance (median)")
    ax.set_title(f"Lifecycle core on {count} fake instances")
    save(fig, "bench-fleet-core.png", "benchmarks/results/fleet_core.md", date)


COPIED = {
    "cli.md": "wall s",
    "planner_scaling.md": "offers",
    "fleet_core.md": "phase",
    "estimate.md": "ratio",
    "commands.md": "`gpuplan ...`",
    "install.md": "site-packages MiB",
}
SECTIONS = {"planner_scaling.md": "How cost grows"}
START, END = "<!-- results:start -->", "<!-- results:end -->"


def section(text: str, heading: str) -> list[str]:
    """The lines under ``## heading`` up to the next heading, verbatim."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip() == heading
            continue
        if inside and line.strip():
            out.append(line)
    return out


def raw_tables(text: str) -> list[tuple[str, list[str]]]:
    """Every Markdown table in ``text`` as its raw lines, with the last heading above."""
    out: list[tuple[str, list[str]]] = []
    heading, lines = "", []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            lines.append(line)
            continue
        if lines:
            out.append((heading, lines))
            lines = []
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
    return out


def results_block() -> str:
    """The generated part of docs/benchmarks.md."""
    out = [
        START,
        "<!-- Written by scripts/plot_benchmarks.py from benchmarks/results/; do not edit. -->",
        "",
        "| results file | what | written |",
        "|---|---|---|",
    ]
    copied: list[str] = []
    for path in sorted(RESULTS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        title = text.splitlines()[0].lstrip("# ").strip() if text else path.stem
        found = DATE.search(text)
        link = f"../benchmarks/results/{path.name}"
        out.append(f"| [{path.name}]({link}) | {title} | {found.group(0) if found else '?'} |")
        if path.name not in COPIED:
            continue
        copied += ["", f"#### From [{path.name}]({link}), {found.group(0) if found else '?'}"]
        for heading, lines in raw_tables(text):
            if COPIED[path.name] in lines[0] or any(COPIED[path.name] in x for x in lines):
                copied += ["", f"*{heading}*", "", *lines]
        if path.name in SECTIONS:
            copied += ["", f"*{SECTIONS[path.name]}*", "", *section(text, SECTIONS[path.name])]
    return "\n".join([*out, *copied, "", END])


def refresh_docs() -> None:
    doc = ROOT / "docs" / "benchmarks.md"
    if not doc.exists() or START not in doc.read_text(encoding="utf-8"):
        print("skipped: docs/benchmarks.md has no results markers", file=sys.stderr)
        return
    text = doc.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1] if END in rest else ""
    doc.write_text(head + results_block() + tail, encoding="utf-8")
    print("refreshed the results block of docs/benchmarks.md")


def main() -> int:
    failed = 0
    for plot in (planner_scaling, api_calls, cli, fleet_core):
        try:
            plot()
        except (KeyError, StopIteration, ValueError, IndexError) as exc:
            # A results file whose tables changed shape: say which plot, keep the rest.
            print(f"skipped {plot.__name__}: cannot read its table ({exc!r})", file=sys.stderr)
            failed += 1
    refresh_docs()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
