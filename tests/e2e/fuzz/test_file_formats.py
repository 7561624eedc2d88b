"""Hypothesis over every file format: valid seeds, mutated; no traceback, no hang.

Each format starts from a file gpuplan accepts (a shipped policy, a job file, a trace
folder, the test catalog, a SkyPilot ``vms.csv``, a ledger with runs) and applies a
few edits drawn from a hostile alphabet: YAML and CSV structure characters, anchors and
tags, ``${VAR}`` references, NaN and infinities, 400-digit numbers, NUL and non-UTF-8
bytes, tabs. The command that reads the format must answer 0, 1 or 2 (2 with an error
line), within its time limit. Deterministic (``derandomize``), 30 cases a format.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import write_catalog
from tests.e2e.fuzz.conftest import Hostile
from tests.e2e.fuzz.runner import describe, problems_with, run_cli

ROOT = Path(__file__).resolve().parents[3]
TOKENS = [
    ":", "-", "- ", "[", "]", "{", "}", ",", "\n", "\n  ", "\t", " ", "#", "'", '"', "&a ",
    "*a", "!!python/object:os.system ", "!!binary ", "${AWS_SECRET_ACCESS_KEY}",
    "${GPUPLAN_X}", ".nan", ".inf", "-.inf", "1.0e+400", "9" * 400, "0", "-1", "1e9",
    "2026-13-45", "null", "~", "true", "\x00", "\xff", "é", "\u202e", "%", "\\", "$",
    "https://127.0.0.1:99999/x", "http://169.254.169.254/", "<<: *a", "---\n", "...",
    "?", "|", ">", "@", "`", ";", "=", "+", "NaN", "Infinity", "1/0", "0x1F", "1_0",
]  # fmt: skip
FORMATS = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with one to four edits: insert, replace or delete at drawn places."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        token = draw(st.sampled_from(TOKENS)).encode("utf-8", "surrogatepass")
        if draw(st.booleans()) and token == b"\xc3\xbf":
            token = b"\xff"  # a byte that is not UTF-8
        op = draw(st.sampled_from(["insert", "replace", "delete"]))
        if op == "insert":
            data[at:at] = token
        elif op == "replace":
            data[at : at + len(token)] = token
        else:
            del data[at : at + draw(st.integers(1, 20))]
    return bytes(data)


def fresh(tmp_path: Path) -> Path:
    """A new folder per example (``tmp_path`` is shared by all examples of a test)."""
    return Path(tempfile.mkdtemp(dir=tmp_path))


def _judge(argv: list[str], allowed: tuple[int, ...] = (0, 1, 2)) -> None:
    result = run_cli(argv)
    found = problems_with(result, allowed)
    assert not found, f"{describe(result)}: " + "; ".join(found)
    assert "fuzz-secret-never-printed" not in result.out + result.err
    if result.code == 2:
        text = result.err + result.out
        assert "error" in text, f"{describe(result)}: exit 2 without an error line"


POLICY_SEED = (ROOT / "policies" / "research-spot.yaml").read_bytes()


@FORMATS
@given(content=mutated(POLICY_SEED))
def test_policy_yaml(tmp_path: Path, content: bytes) -> None:
    tmp_path = fresh(tmp_path)
    path = tmp_path / "policy.yaml"
    path.write_bytes(content)
    _judge(["policy", "check", str(path)], allowed=(0, 2))
    _judge(["policy", "show", "--json", str(path)], allowed=(0, 2))


JOB_SEED = b"params: 7B\ntokens: 1T\ngpu: [H100]\ngpus: 64\nprecision: bf16\n"


@FORMATS
@given(content=mutated(JOB_SEED), json=st.booleans())
def test_job_file(tmp_path: Path, content: bytes, json: bool) -> None:
    tmp_path = fresh(tmp_path)
    path = tmp_path / ("job.json" if json else "job.yaml")
    path.write_bytes(content)
    _judge(["estimate", "--job", str(path), "--top", "3"])


TRACE_FLEET = b"instance_id,instance_type,trace_class,hourly_usd\ni1,g5.xlarge,batch,1.006\n"
TRACE_SERIES = b"minute,utilisation\n" + b"".join(b"%d,%d\n" % (m, m % 7) for m in range(90))


@FORMATS
@given(fleet=mutated(TRACE_FLEET), series=mutated(TRACE_SERIES), which=st.integers(0, 2))
def test_trace_csv(tmp_path: Path, fleet: bytes, series: bytes, which: int) -> None:
    tmp_path = fresh(tmp_path)
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "fleet.csv").write_bytes(fleet if which != 1 else TRACE_FLEET)
    (folder / "i1.csv").write_bytes(series if which != 0 else TRACE_SERIES)
    _judge(["simulate", "--traces", str(folder), "--json"])


@FORMATS
@given(data=st.data(), name=st.sampled_from(["aws.csv", "gcp.csv", "azure.csv", "gpus.toml"]))
def test_catalog_csv_and_toml(tmp_path: Path, data: st.DataObject, name: str) -> None:
    tmp_path = fresh(tmp_path)
    folder = write_catalog(tmp_path / "catalog")
    seed = (folder / name).read_bytes()[:3000]
    (folder / name).write_bytes(data.draw(mutated(seed)))
    _judge(["catalog", "--catalog-dir", str(folder), "--json"])
    _judge(["gpus", "--catalog-dir", str(folder)])


SKY_SEED = (ROOT / "tests" / "loaders" / "data" / "skypilot" / "aws" / "vms.csv").read_bytes()


@FORMATS
@given(content=mutated(SKY_SEED))
def test_skypilot_import(tmp_path: Path, content: bytes) -> None:
    tmp_path = fresh(tmp_path)
    folder = tmp_path / "sky"
    (folder / "aws").mkdir(parents=True)
    (folder / "aws" / "vms.csv").write_bytes(content)
    out = tmp_path / "catalog"
    shutil.copytree(write_catalog(tmp_path / "seed"), out)
    _judge(["catalog", "import", str(folder), "--format", "skypilot", "--provider", "aws",
            "--dry-run", "--catalog-dir", str(out)])  # fmt: skip


LEDGER_CELLS = [
    ("runs", "summary"), ("runs", "started_at"), ("runs", "finished_at"), ("runs", "status"),
    ("runs", "dry_run"), ("runs", "kind"), ("spend_snapshots", "month_to_date_usd"),
    ("spend_snapshots", "recorded_at"), ("spend_snapshots", "detail"),
]  # fmt: skip
CELL_VALUES = [
    "not json", "[1, 2]", "{}", '{"verdicts": "x", "actions": [1], "acted": {"a": 1}}',
    '{"seen": [{"hourly_usd": "abc", "gpu_count": "x", "labels": 5}]}', "yesterday",
    "2026-13-45T00:00:00", "9999-12-31T23:59:59", "0001-01-01", "", "NaN", "Infinity",
    "1e400", None, 12, -1, 1.5, b"\x00\xff",
]  # fmt: skip


_PRISTINE: dict[str, bytes] = {}


def _ledger(path: Path, hostile: Hostile) -> None:
    """A ledger with a stop-idle run and a budget snapshot (made once, then copied)."""
    if "ledger" not in _PRISTINE:
        made = Path(tempfile.mkdtemp()) / "ledger.sqlite3"
        policy = str(hostile.good_policy)
        for argv in (["stop-idle", "--policy", policy, "--apply", "--db", str(made)],
                     ["budget", "--policy", policy, "--db", str(made)]):  # fmt: skip
            result = run_cli(argv)
            assert result.code in (0, 1), f"{describe(result)}: {result.err[-400:]}"
        _PRISTINE["ledger"] = made.read_bytes()
        shutil.rmtree(made.parent)
    path.write_bytes(_PRISTINE["ledger"])


@FORMATS
@given(edits=st.lists(st.tuples(st.sampled_from(LEDGER_CELLS), st.sampled_from(CELL_VALUES)),
                      min_size=1, max_size=3))  # fmt: skip
def test_ledger_rows(
    hostile: Hostile, tmp_path: Path, edits: list[tuple[tuple[str, str], object]]
) -> None:
    tmp_path = fresh(tmp_path)
    path = tmp_path / "ledger.sqlite3"
    _ledger(path, hostile)
    with sqlite3.connect(path) as conn:
        for (table, column), value in edits:
            try:
                conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
            except sqlite3.IntegrityError:
                continue  # a NOT NULL column: the schema itself refuses this damage
    for argv in (["history"], ["history", "--json"], ["savings"], ["fleet", "--report"],
                 ["budget", "--policy", str(hostile.good_policy)]):  # fmt: skip
        _judge([*argv, "--db", str(path)])


@FORMATS
@given(offset=st.integers(0, 40_000), junk=st.binary(min_size=1, max_size=64))
def test_ledger_file_bytes(hostile: Hostile, tmp_path: Path, offset: int, junk: bytes) -> None:
    tmp_path = fresh(tmp_path)
    path = tmp_path / "ledger.sqlite3"
    _ledger(path, hostile)
    data = bytearray(path.read_bytes())
    data[offset : offset + len(junk)] = junk
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(bytes(data))
    for argv in (["history"], ["savings"], ["fleet", "--report"]):
        _judge([*argv, "--db", str(broken)])
