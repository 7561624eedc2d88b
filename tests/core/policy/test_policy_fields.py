"""Hostile input in the organisation-scope keys: each is one line, exit 2, nothing acted on.

Every case runs ``gpuplan policy check`` in-process and expects an error line that names
the file, line, column and key path (one per problem); one case runs ``stop-idle
--apply`` to show that a refused policy reaches no cloud at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.policy import Policy

HEAD = "version: 1\nname: org\nscope:\n"
AWS = HEAD + "  aws:\n    regions: [us-east-1]\n    role_name: gpuplan-reader\n"
# line 6 is the first key after role_name in AWS; line 4 is the cloud section in HEAD.

CASES: list[tuple[str, str, str]] = [
    ("accounts-some", AWS + "    accounts: some\n",
     ":7:15: scope.aws.accounts: expected all, a list of 12-digit account ids, or "
     "{ous: [ou-...]}, got 'some'"),
    ("accounts-number", AWS + "    accounts: 7\n", ":7:15: scope.aws.accounts: expected all"),
    ("account-id-short", AWS + "    accounts:\n      - '111122223333'\n      - '1234'\n",
     ":9:9: scope.aws.accounts[1]: '1234' is not a 12-digit AWS account id"),
    ("account-id-unquoted", AWS + "    accounts: [111122223333]\n",
     ":7:16: scope.aws.accounts[0]: expected a 12-digit AWS account id in quotes"),
    ("account-id-letters", AWS + "    accounts: ['11112222333x']\n",
     "scope.aws.accounts[0]: '11112222333x' is not a 12-digit"),
    ("accounts-empty", AWS + "    accounts: []\n", "scope.aws.accounts: must not be empty"),
    ("ous-unknown-key", AWS + "    accounts: {ous: [ou-ab12-cd345678], oz: [x]}\n",
     "scope.aws.accounts.oz: unknown key; allowed here: ous"),
    ("ous-typo", AWS + "    accounts: {ou: [ou-ab12-cd345678]}\n",
     "scope.aws.accounts.ou: unknown key; did you mean 'ous'?"),
    ("ou-id-bad", AWS + "    accounts: {ous: [ou-x]}\n",
     "scope.aws.accounts.ous[0]: 'ou-x' is not an AWS organisational unit id"),
    ("ous-empty", AWS + "    accounts: {ous: []}\n", "scope.aws.accounts.ous: must not be empty"),
    ("role-name-bad", AWS.replace("gpuplan-reader", "'bad role!'") + "    accounts: all\n",
     "scope.aws.role_name: 'bad role!' is not an IAM role name"),
    ("accounts-without-role", AWS.replace("    role_name: gpuplan-reader\n", "")
     + "    accounts: all\n", ":6:15: scope.aws.accounts: needs role_name"),
    ("role-without-accounts", AWS, ":6:16: scope.aws.role_name: only applies with accounts"),
    ("exclude-bad-id", AWS + "    accounts: all\n    exclude_accounts: ['12']\n",
     "scope.aws.exclude_accounts[0]: '12' is not a 12-digit AWS account id"),
    ("aws-unknown-key", AWS + "    acounts: all\n",
     "scope.aws.acounts: unknown key; did you mean 'accounts'?"),
    ("gcp-nothing", HEAD + "  gcp:\n    zones: [us-central1-a]\n",
     ":5:5: scope.gcp: names no project"),
    ("gcp-both", HEAD + "  gcp:\n    projects: [p1]\n    organization: '42'\n",
     "scope.gcp.projects: list projects, or discover them"),
    ("gcp-folder-bad", HEAD + "  gcp:\n    folders: [research]\n",
     "scope.gcp.folders[0]: 'research' is not a GCP folder id"),
    ("gcp-organization-list", HEAD + "  gcp:\n    organization: ['42']\n",
     "scope.gcp.organization: expected a GCP organisation id"),
    ("gcp-labels-upper", HEAD + "  gcp:\n    project_labels: {Team: x}\n",
     "scope.gcp.project_labels.Team: 'Team' is not a tag or label name"),
    ("azure-every", HEAD + "  azure:\n    subscriptions: every\n",
     ":5:20: scope.azure.subscriptions: expected all or a list of subscription ids"),
    ("azure-both", HEAD + "  azure:\n    subscriptions: all\n    management_groups: [ml]\n",
     "scope.azure.management_groups: subscriptions and management_groups exclude each other"),
    ("azure-nothing", HEAD + "  azure:\n    resource_groups: [rg]\n",
     "scope.azure: names no subscription"),
    ("azure-group-bad", HEAD + "  azure:\n    management_groups: ['ml/../x']\n",
     "scope.azure.management_groups[0]: 'ml/../x' is not an Azure management group id"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_line_with_place_and_key(
    text: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "org.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["policy", "check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("gpuplan: error: ")]
    # One line per problem; a misspelt key is two (its own, and the key it should be).
    assert 1 <= len(lines) <= 2, err
    assert all(ln.startswith(f"gpuplan: error: {path}:") for ln in lines), err
    assert any(expected in ln for ln in lines), err


def test_a_refused_policy_reaches_no_cloud(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No credentials and no endpoint: any cloud call would fail loudly, not exit 2.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "org.yaml"
    path.write_text(AWS + "    accounts: some\n", encoding="utf-8")
    db = tmp_path / "ledger.sqlite3"
    assert main(["stop-idle", "--policy", str(path), "--apply", "--db", str(db)]) == 2
    assert "scope.aws.accounts" in capsys.readouterr().err
    assert not db.exists()  # refused before the ledger is opened: no run recorded


@pytest.mark.parametrize(
    "scope",
    [
        {"aws": {"regions": ["us-east-1"], "role_arn": "arn:aws:iam::111122223333:role/x"}},
        {"gcp": {"projects": ["p"]}},
        {"azure": {"subscriptions": ["00000000-0000-0000-0000-000000000001"]}},
    ],
)
def test_existing_scopes_stay_valid(scope: dict[str, object]) -> None:
    policy = Policy.model_validate({"version": 1, "name": "old", "scope": scope})
    assert policy.scope.providers
