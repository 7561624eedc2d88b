"""Shards sharing one PostgreSQL ledger, through the installed CLI (real processes).

The fleet is ``GPUPLAN_FAKE_FLEET``: every process holds its own in-memory copy of the
clouds, so a process never sees what another did to an instance. Only the ledger is
shared; that is exactly what must keep two overlapping runs from both acting.
Scopes of the fake: ``aws (in-memory fake)``, ``gcp ...``, ``azure ...``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.lifecycle.shard import Shard, shard_of
from gpuplan.ledger import Ledger
from gpuplan.usecases.lifecycle.session import lock_name
from tests.ledger.pgserver import PASSWORD, ROLE, PgServer

AZURE_SUB = "00000000-0000-0000-0000-00000000a2b1"
IDLE = {
    "aws": ["i-0a1", "i-0a2", "i-0a3"],
    "gcp": ["g-1", "g-2"],
    "azure": ["vm-1", "vm-2"],
}
SCOPE = {cloud: f"{cloud} (in-memory fake)" for cloud in IDLE}
POLICY = f"""version: 1
name: research-team
scope:
  aws: {{regions: [us-east-1]}}
  gcp: {{projects: [research-ml]}}
  azure: {{subscriptions: ["{AZURE_SUB}"]}}
  match_labels: {{team: research}}
idle: {{allow_data_loss: false}}
"""


def _fleet(path: Path) -> Path:
    started = (datetime.now(UTC) - timedelta(hours=5)).isoformat()
    where = {
        "aws": ("123456789012", "us-east-1", "g5.xlarge"),
        "gcp": ("research-ml", "us-central1", "g2-standard-4"),
        "azure": (AZURE_SUB, "eastus", "Standard_NV36ads_A10_v5"),
    }
    instances: list[dict[str, Any]] = []
    for cloud, ids in IDLE.items():
        account, region, kind = where[cloud]
        for iid in [*ids, f"{ids[0]}-busy"]:
            instances.append(
                {"provider": cloud, "account": account, "region": region, "instance_id": iid,
                 "instance_type": kind, "state": "running", "started_at": started,
                 "gpu": "A10G", "gpu_count": 1, "hourly_usd": "1.006",
                 "labels": {"team": "research"}, "risk": {"spot_one_time": False}}
            )  # fmt: skip
    busy = {i["instance_id"]: 90 for i in instances if i["instance_id"].endswith("-busy")}
    idle = {iid: 0.5 for ids in IDLE.values() for iid in ids}
    path.write_text(
        json.dumps({"instances": instances, "utilisation_percent": {**idle, **busy}}),
        encoding="utf-8",
    )
    return path


@dataclass
class Shards:
    pg: PgServer
    db: str
    policy: Path
    env: dict[str, str]

    def dsn(self, *, password: bool = False) -> str:
        return self.pg.dsn(self.db, password=password)

    def cmd(self, *extra: str, password: bool = False) -> list[str]:
        return [sys.executable, "-m", "gpuplan", "stop-idle", "--policy", str(self.policy),
                "--db", self.dsn(password=password), "--json", *extra]  # fmt: skip

    def start(self, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.cmd(*extra), env={**self.env, **(env or {})}, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip

    def run(self, *extra: str, password: bool = False, env: dict[str, str] | None = None) -> Any:
        return subprocess.run(
            self.cmd(*extra, password=password), env={**self.env, **(env or {})},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with Ledger(self.dsn()) as ledger:
            return ledger.select(sql)


@pytest.fixture
def shards(pg: PgServer, pg_db: str, tmp_path: Path) -> Shards:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "GPUPLAN_FAKE_FLEET": str(_fleet(tmp_path / "fleet.json")),
        "PGPASSWORD": PASSWORD,
    }
    return Shards(pg, pg_db, policy, env)


def _finish(child: subprocess.Popen[str]) -> tuple[int, dict[str, Any], str]:
    out, err = child.communicate(timeout=120)
    assert "Traceback" not in err, err
    return child.returncode, json.loads(out), err


def test_the_fake_scopes_split_over_two_shards() -> None:
    # The other tests rely on this split; if the hash changed, they would test less.
    assert [shard_of(SCOPE[c], 2) for c in ("aws", "gcp", "azure")] == [0, 0, 1]


def test_two_shards_in_parallel_each_survey_their_own_scopes(shards: Shards) -> None:
    children = [shards.start("--apply", "--shard", f"{i}/2") for i in range(2)]
    results = [_finish(child) for child in children]
    assert [code for code, _, _ in results] == [0, 0], [err for _, _, err in results]
    seen = [{d["instance_id"] for d in out["decisions"]} for _, out, _ in results]
    assert seen[0].isdisjoint(seen[1])
    assert seen[0] | seen[1] == {i for ids in IDLE.values() for i in [*ids, f"{ids[0]}-busy"]}
    assert seen[1] == {*IDLE["azure"], "vm-1-busy"}
    assert [out["shard"] for _, out, _ in results] == ["0/2", "1/2"]
    assert "shard 1/2: 1 of 3 scopes (azure (in-memory fake))" in results[1][2]
    runs = shards.rows("SELECT shard, status, dry_run FROM runs ORDER BY shard")
    assert runs == [("0/2", "ok", 0), ("1/2", "ok", 0)]
    history = subprocess.run(
        [sys.executable, "-m", "gpuplan", "history", "--json", "--db", shards.dsn()],
        env=shards.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert sorted(r["shard"] for r in json.loads(history.stdout)) == ["0/2", "1/2"]
    stopped = shards.rows(
        "SELECT instance_id FROM actions WHERE outcome IN ('stopped', 'deallocated')"
    )
    assert sorted(r[0] for r in stopped) == sorted(i for ids in IDLE.values() for i in ids)


def test_overlapping_runs_never_act_on_one_instance_twice(shards: Shards) -> None:
    """A whole-fleet run (``0/1``) and shard ``0/2`` at once: aws and gcp are in both.
    Their locks differ, so both run; each process would stop every idle instance it
    sees (its fake knows nothing of the other). The ledger's claim lets one act."""
    both = shards.start("--apply", "--shard", "0/1")
    half = shards.start("--apply", "--shard", "0/2")
    (code_all, out_all, err_all), (code_half, out_half, err_half) = map(_finish, (both, half))
    acted = shards.rows(
        "SELECT instance_id, COUNT(*) FROM actions"
        " WHERE outcome IN ('stopped', 'deallocated') GROUP BY instance_id"
    )
    assert sorted(acted) == sorted((i, 1) for ids in IDLE.values() for i in ids)
    overlap = {*IDLE["aws"], *IDLE["gcp"]}
    skipped = shards.rows("SELECT instance_id, detail FROM actions WHERE outcome = 'skipped'")
    assert sorted(i for i, _ in skipped) == sorted(overlap)  # the loser of each claim
    assert all("claimed it in the ledger" in detail for _, detail in skipped)
    assert {r for r in shards.rows("SELECT shard FROM runs")} == {("0/1",), ("0/2",)}
    # Each skip is named to the operator (exit 1: two schedulers overlap, fix the setup).
    for code, out, err in ((code_all, out_all, err_all), (code_half, out_half, err_half)):
        lost = [d["instance_id"] for d in out["decisions"] if d["action"] == "skipped"]
        assert code == (1 if lost else 0), err
        for iid in lost:
            assert f"{iid}: another gpuplan run" in err
    assert {d["instance_id"] for d in out_all["decisions"]} >= set(IDLE["azure"])


def test_a_second_run_of_the_same_shard_waits_then_gives_up(shards: Shards) -> None:
    name = lock_name("research-team", Shard(0, 2))
    with Ledger(shards.dsn()) as holder:
        assert holder.try_lock(name)
        busy = shards.run("--apply", "--shard", "0/2", "--lock-wait", "1")
        other = shards.run("--apply", "--shard", "1/2", "--lock-wait", "1")
    assert busy.returncode == 1
    [line] = busy.stderr.strip().splitlines()
    assert line.startswith("gpuplan: error: another stop-idle run holds the lock")
    assert "shard=0/2" in line and "nothing was done" in line
    assert other.returncode == 0, other.stderr
    assert shards.rows("SELECT shard FROM runs") == [("1/2",)]  # the busy one did nothing


def test_kubernetes_indexed_job_environment_picks_the_shard(shards: Shards) -> None:
    done = shards.run(env={"JOB_COMPLETION_INDEX": "1", "GPUPLAN_SHARDS": "2"})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["shard"] == "1/2" and out["dry_run"] is True
    assert {d["instance_id"] for d in out["decisions"]} == {*IDLE["azure"], "vm-1-busy"}


@pytest.mark.parametrize(
    ("extra", "env", "says"),
    [
        (["--shard", "3/2"], {}, "shard index must be from 0 to 1"),
        (["--shard", "x"], {}, "expected a shard as INDEX/COUNT"),
        (["--shards", "0"], {"JOB_COMPLETION_INDEX": "0"}, "from 1 to"),
        ([], {"JOB_COMPLETION_INDEX": "0"}, "set GPUPLAN_SHARDS"),
        ([], {"JOB_COMPLETION_INDEX": "5", "GPUPLAN_SHARDS": "2"}, "from 0 to 1"),
        (["--shards", "3"], {}, "needs JOB_COMPLETION_INDEX"),
    ],
)
def test_a_bad_shard_is_bad_input_and_nothing_runs(
    shards: Shards, extra: list[str], env: dict[str, str], says: str
) -> None:
    done = shards.run("--apply", *extra, env=env)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert shards.rows("SELECT COUNT(*) FROM runs") == [(0,)]


def test_the_password_never_appears_in_output_or_any_ledger_row(shards: Shards) -> None:
    env = {"PGPASSWORD": ""}  # only the URL carries it this time
    done = shards.run("--apply", password=True, env=env)
    assert done.returncode == 0, done.stderr
    history = subprocess.run(
        [sys.executable, "-m", "gpuplan", "history", "--json", "--db", shards.dsn(password=True)],
        env={**shards.env, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert history.returncode == 0
    [run] = json.loads(history.stdout)
    assert (run["status"], run["shard"]) == ("ok", None)
    dump = shards.pg.dump(shards.db)
    assert "INSERT INTO public.runs" in dump and "i-0a1" in dump  # the dump holds the rows
    for text in (done.stdout, done.stderr, history.stdout, history.stderr, dump):
        assert PASSWORD not in text


@pytest.mark.parametrize("case", ["wrong password", "unreachable"])
def test_a_ledger_that_cannot_be_reached_is_one_line_and_nothing_is_done(
    shards: Shards, case: str
) -> None:
    if case == "wrong password":
        dsn = shards.dsn().replace(f"{ROLE}@", f"{ROLE}:not-{PASSWORD}@")
    else:
        dsn = f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:1/{shards.db}"
    done = subprocess.run(
        [sys.executable, "-m", "gpuplan", "stop-idle", "--policy", str(shards.policy),
         "--apply", "--db", dsn],
        env={**shards.env, "PGPASSWORD": ""}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("gpuplan: error: postgresql://gpuplan:***@127.0.0.1:")
    assert PASSWORD not in line and done.stdout == ""
    assert shards.rows("SELECT COUNT(*) FROM runs") == [(0,)]
