"""AWS Organizations end to end on moto: discover member accounts, assume a role in each.

Three member accounts under an OU (one of them in a child OU); the gpuplan role exists
in two. ``gpuplan stop-idle --apply`` through ``main()`` stops the idle instance in both
of those, names the third account with the role and STS's refusal as a problem, leaves
its instance running, and exits 1. STS refuses a missing role because tests/usecases/org/aws_org.py
makes moto's STS check the role exists (moto alone would hand out credentials for any
role ARN: see that module's docstring).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.core.policy import Policy
from gpuplan.usecases.clouds.adapters import build_adapters
from tests.fakes.aws_world import NOW, flat
from tests.usecases.org.aws_org import MANAGEMENT, ROLE, Org, build_org, strict_sts

TEAM = {"team": "research"}
ALL_THREE = {"alpha": True, "bravo": True, "charlie": False}


@pytest.fixture
def org(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Org]:
    from moto import mock_aws

    with mock_aws():
        built = build_org(ALL_THREE, nested="bravo")
        for name in ALL_THREE:
            world = built.world(name)
            iid = world.launch(tags=TEAM)
            world.publish(iid, flat(1.0))
        strict_sts(monkeypatch, built)
        yield built


def _policy(tmp_path: Path, accounts: str, regions: str = "[us-east-1]", extra: str = "") -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(
        f"""\
version: 1
name: org
scope:
  aws:
    regions: {regions}
    accounts: {accounts}
    role_name: {ROLE}
{extra}
  match_labels: {{team: research}}
idle: {{allow_data_loss: true}}
""",
        encoding="utf-8",
    )
    return str(path)


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with freeze_time(NOW):
        code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def _instance(org: Org, name: str) -> str:
    ec2 = org.world(name).client("ec2", "us-east-1")
    return str(ec2.describe_instances()["Reservations"][0]["Instances"][0]["InstanceId"])


def test_stop_idle_acts_in_two_accounts_and_names_the_third(
    org: Org, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = _policy(tmp_path, f"{{ous: [{org.ous['ml']}]}}")
    db = str(tmp_path / "ledger.sqlite3")
    args = ["stop-idle", "--policy", policy, "--db", db, "--catalog-dir", str(lc_catalog_dir)]
    code, out, err = _run([*args, "--apply", "--json"], capsys)

    assert code == 1
    record = json.loads(out)
    alpha, bravo, charlie = (org.accounts[n] for n in ("alpha", "bravo", "charlie"))
    stopped = {d["instance_id"] for d in record["decisions"] if d["action"] == "stopped"}
    assert stopped == {_instance(org, "alpha"), _instance(org, "bravo")}
    assert org.world("alpha").state(_instance(org, "alpha")) == "stopped"
    assert org.world("bravo").state(_instance(org, "bravo")) == "stopped"  # in ml/deep
    assert org.world("charlie").state(_instance(org, "charlie")) == "running"
    (problem,) = record["problems"]
    assert problem.startswith(f"aws {charlie}/us-east-1: listing failed: role {ROLE} ")
    assert "not assumable: AccessDenied" in problem
    assert f"sts:AssumeRole on resource: arn:aws:iam::{charlie}:role/{ROLE}" in problem
    assert problem in err
    assert record["summary"]["stopped"] == 2
    assert not any(alpha in p or bravo in p for p in record["problems"])


def test_one_assume_role_per_account_even_with_many_regions(org: Org) -> None:
    policy = Policy.model_validate(
        {
            "version": 1,
            "name": "org",
            "scope": {
                "aws": {
                    "regions": ["us-east-1", "us-west-2", "eu-west-1"],
                    "accounts": {"ous": [org.ous["ml"]]},
                    "role_name": ROLE,
                }
            },
        }
    )
    fleet = build_adapters(policy, None, {})
    assert fleet.problems == []
    assert org.assumed == {}  # building assumes nothing: roles are assumed on first use
    accounts = sorted(org.accounts.values())
    assert [a.scope for a in fleet.adapters] == [
        f"aws {account}/{region}"
        for account in accounts
        for region in ("us-east-1", "us-west-2", "eu-west-1")
    ]
    failures = []
    for adapter in fleet.adapters:
        try:
            adapter.list_instances()
        except Exception as exc:  # the refusal, as a ProviderError
            failures.append(str(exc))
    charlie = org.accounts["charlie"]
    assert len(failures) == 3 and all(f.startswith(f"aws {charlie}/") for f in failures)
    assert sorted(org.assumed.values()) == [1, 1, 1]  # refusal remembered for the run


def test_all_accounts_skips_suspended_and_excluded(
    org: Org, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    boto3.client("organizations").close_account(AccountId=org.accounts["charlie"])
    policy = _policy(tmp_path, "all", extra=f"    exclude_accounts: ['{MANAGEMENT}']")
    args = ["fleet", "--policy", policy, "--catalog-dir", str(lc_catalog_dir), "--json"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    record = json.loads(out)
    assert record["problems"] == []
    listed = {i["instance_id"] for i in record["instances"]}
    assert listed == {_instance(org, "alpha"), _instance(org, "bravo")}
    assert not any(MANAGEMENT in arn for arn in org.assumed)


def test_a_listed_account_needs_no_organizations_call(
    org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.organizations.models import OrganizationsBackend

    calls: list[str] = []
    for name in ("list_accounts", "list_accounts_for_parent", "list_children"):
        monkeypatch.setattr(
            OrganizationsBackend, name, lambda self, *a, _n=name, **k: calls.append(_n)
        )
    bravo = org.accounts["bravo"]
    policy = Policy.model_validate(
        {
            "version": 1,
            "name": "org",
            "scope": {"aws": {"regions": ["us-east-1"], "accounts": [bravo], "role_name": ROLE}},
        }
    )
    fleet = build_adapters(policy, None, {})
    (adapter,) = fleet.adapters
    assert adapter.scope == f"aws {bravo}/us-east-1"
    assert [i.instance_id for i in adapter.list_instances()] == [_instance(org, "bravo")]
    assert calls == []
    assert fleet.problems == []


def test_an_unknown_ou_is_a_problem_and_the_others_are_walked(org: Org) -> None:
    policy = Policy.model_validate(
        {
            "version": 1,
            "name": "org",
            "scope": {
                "aws": {
                    "regions": ["us-east-1"],
                    "accounts": {"ous": ["ou-zzzz-zzzzzzzz", org.ous["deep"]]},
                    "role_name": ROLE,
                }
            },
        }
    )
    fleet = build_adapters(policy, None, {})
    assert [a.scope for a in fleet.adapters] == [f"aws {org.accounts['bravo']}/us-east-1"]
    (problem,) = fleet.problems
    assert problem.startswith("aws ou-zzzz-zzzzzzzz: cannot list its accounts: ")


def test_role_arn_is_assumed_at_the_start_and_refused_in_one_line(org: Org) -> None:
    alpha = org.accounts["alpha"]

    def fleet_for(role: str) -> Any:
        scope = {"regions": ["us-east-1"], "role_arn": f"arn:aws:iam::{alpha}:role/{role}"}
        pol = Policy.model_validate({"version": 1, "name": "one", "scope": {"aws": scope}})
        return build_adapters(pol, None, {})

    good = fleet_for(ROLE)
    assert good.problems == [] and [a.scope for a in good.adapters] == ["aws us-east-1"]
    assert [i.instance_id for i in good.adapters[0].list_instances()] == [_instance(org, "alpha")]
    bad = fleet_for("nope")
    assert bad.adapters == []
    (problem,) = bad.problems
    assert problem.startswith("aws: cannot get credentials: role nope not assumable: AccessDenied")


def test_an_exclusion_that_covers_every_account_is_a_named_problem(
    org: Org, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 25: on main zero discovered accounts exited 0 with nothing said.
    every = ", ".join(f"'{a}'" for a in [MANAGEMENT, *org.accounts.values()])
    policy = _policy(tmp_path, "all", extra=f"    exclude_accounts: [{every}]")
    for command in ("fleet", "stop-idle"):
        args = [command, "--policy", policy, "--catalog-dir", str(lc_catalog_dir)]
        if command == "stop-idle":
            args += ["--db", str(tmp_path / "l.db")]
        code, _, err = _run(args, capsys)
        assert code == 1, err
        assert "gpuplan: error: aws: scope discovered no accounts" in err
