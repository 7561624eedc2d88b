"""The shard function (pure) and how a run finds its shard (flags, Indexed Job env)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.shard import Shard, parse_shard, shard_of
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.clouds.adapters import Adapters
from gpuplan.usecases.lifecycle.shard import resolve_shard, shard_fleet, shard_notice

SCOPES = (
    [f"aws {r}" for r in ("us-east-1", "us-west-2", "eu-west-1", "ap-south-1")]
    + [f"gcp project-{n}" for n in range(40)]
    + [f"azure 00000000-0000-0000-0000-{n:012d}" for n in range(20)]
)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 64])
def test_every_scope_belongs_to_exactly_one_shard(count: int) -> None:
    owners = {s: [i for i in range(count) if Shard(i, count).owns(s)] for s in SCOPES}
    assert all(len(found) == 1 for found in owners.values())
    assert {found[0] for found in owners.values()} <= set(range(count))


def test_the_split_is_roughly_even() -> None:
    counts = Counter(shard_of(s, 4) for s in SCOPES)
    assert set(counts) == {0, 1, 2, 3} and min(counts.values()) >= 5


def test_the_order_scopes_are_listed_in_does_not_matter() -> None:
    forward = {s for s in SCOPES if Shard(1, 3).owns(s)}
    backward = {s for s in reversed(SCOPES) if Shard(1, 3).owns(s)}
    assert forward == backward


def test_the_same_in_another_process_with_another_hash_seed() -> None:
    code = (
        "from gpuplan.core.lifecycle.shard import shard_of;"
        f"print([shard_of(s, 7) for s in {SCOPES!r}])"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "random")
    }
    assert outs == {f"{[shard_of(s, 7) for s in SCOPES]}\n"}


def test_pinned_values_keep_shards_stable_across_versions() -> None:
    # sha256 of the scope name, first 8 bytes big-endian, mod COUNT. Changing the hash
    # would move scopes between the shards of a running deployment during an upgrade.
    assert [shard_of(s, 4) for s in ("aws us-east-1", "gcp my-project", "azure x")] == [2, 0, 0]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("3/2", "shard index must be from 0 to 1"),
        ("0/0", "shard count must be from 1"),
        ("1", "INDEX/COUNT"),
        ("-1/2", "INDEX/COUNT"),
        ("a/b", "INDEX/COUNT"),
        ("1/99999999", "INDEX/COUNT"),
    ],
)
def test_bad_shards_are_input_errors(text: str, says: str) -> None:
    with pytest.raises(InputError, match=says) as caught:
        parse_shard(text)
    assert caught.value.exit_code == 2


def test_flag_beats_environment_and_environment_needs_both_parts() -> None:
    job = {"JOB_COMPLETION_INDEX": "2", "GPUPLAN_SHARDS": "4"}
    assert resolve_shard(None, None, {}) is None
    assert resolve_shard("1/3", None, job) == Shard(1, 3)
    assert resolve_shard(None, None, job) == Shard(2, 4)
    assert resolve_shard(None, 8, job) == Shard(2, 8)  # --shards beats GPUPLAN_SHARDS
    with pytest.raises(InputError, match="disagrees"):
        resolve_shard("1/3", 4, {})
    with pytest.raises(InputError, match="set GPUPLAN_SHARDS"):
        resolve_shard(None, None, {"JOB_COMPLETION_INDEX": "0"})
    with pytest.raises(InputError, match="needs JOB_COMPLETION_INDEX"):
        resolve_shard(None, None, {"GPUPLAN_SHARDS": "3"})
    with pytest.raises(InputError, match="whole number"):
        resolve_shard(None, None, {"JOB_COMPLETION_INDEX": "x", "GPUPLAN_SHARDS": "3"})


def test_shard_fleet_keeps_owned_scopes_and_every_problem() -> None:
    fakes = [FakeAdapter(p) for p in (Provider.AWS, Provider.GCP, Provider.AZURE)]
    fleet = Adapters(list(fakes), ["gcp: project-x: API disabled"])
    parts = [shard_fleet(fleet, Shard(i, 2)) for i in range(2)]
    assert sorted(a.scope for p in parts for a in p.adapters) == sorted(f.scope for f in fakes)
    assert all(p.problems == fleet.problems for p in parts)
    assert shard_fleet(fleet, None) is fleet
    notice = shard_notice(fleet, parts[1], Shard(1, 2))
    assert notice is not None and notice.startswith(f"shard 1/2: {len(parts[1].adapters)} of 3")


def test_fleet_lists_only_its_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplan.cli.main import main
    from tests.ledger.test_shard_runs import IDLE, POLICY, _fleet

    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(_fleet(tmp_path / "fleet.json")))
    assert main(["fleet", "--policy", str(policy), "--json", "--shard", "1/2"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["shard"] == "1/2"
    assert {i["instance_id"] for i in out["instances"]} == {*IDLE["azure"], "vm-1-busy"}
    assert "shard 1/2: 1 of 3 scopes" in captured.err
