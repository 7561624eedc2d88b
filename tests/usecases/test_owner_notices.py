"""The owner told first: notices to per-owner webhooks, Slack and email, once each.

A local HTTP server stands for the generic webhook and Slack, a stdlib SMTP server on
loopback for the mail relay; the run is the real ``run_stop_idle`` on the in-memory fake
with a ledger file, so the claims are real. Secrets (the URLs' paths, the password) must
appear in no output, record or ledger row.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Capability, GpuInstance
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.lifecycle.owner_notices import OwnerNotifier
from gpuplan.usecases.lifecycle.stop_idle import result_record, run_stop_idle
from tests.fakes.policy_fixtures import HookServer
from tests.fakes.smtp import smtp_server

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
PASSWORD = "hunter2-smtp-secret"


def policy(port: int) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "team",
            "scope": {"aws": {"regions": ["us-east-1"]}},
            "idle": {"allow_data_loss": True, "grace_minutes": 0},
            "lifetimes": {"max_runtime": "72h", "notice_minutes": "2h"},
            "exemptions": {"max_days": 30},
            "owners": {
                "tag": "owner",
                "allow_insecure": True,
                "destinations": {
                    "ml": {"slack_env": "GPUPLAN_SLACK_ML", "email": ["ml-lead@example.org"]},
                    "vision": {"webhook_env": "GPUPLAN_HOOK_VISION"},
                },
                "smtp": {
                    "host": "127.0.0.1",
                    "port": port,
                    "tls": "none",
                    "sender": "gpuplan@example.org",
                    "username": "gpuplan",
                    "password_env": "GPUPLAN_SMTP_PASSWORD",
                },
            },
        }
    )


def inst(iid: str, owner: str | None, *, ran_h: float = 80, keep: str | None = None) -> GpuInstance:
    labels = {"owner": owner} if owner else {}
    if keep:
        labels["gpuplan-keep"] = keep
    return GpuInstance.model_validate(
        {
            "provider": "aws",
            "account": "123456789012",
            "region": "us-east-1",
            "instance_id": iid,
            "instance_type": "p5.48xlarge",
            "state": "running",
            "started_at": NOW - timedelta(hours=ran_h),
            "gpu": "H100",
            "gpu_count": 8,
            "hourly_usd": "55.04",
            "labels": labels,
        }
    )


def environ(slack: HookServer, vision: HookServer) -> dict[str, str]:
    return {
        "GPUPLAN_SLACK_ML": slack.url,
        "GPUPLAN_HOOK_VISION": vision.url,
        "GPUPLAN_SMTP_PASSWORD": PASSWORD,
    }


def second_hook() -> HookServer:
    return HookServer()


def test_each_owner_is_told_once_through_its_channels(
    hook_server: HookServer, tmp_path: Path
) -> None:
    vision = second_hook()
    try:
        with smtp_server() as (port, box):
            p = policy(port)
            fleet = [
                inst("i-ml", "ml"),
                inst("i-vision", "vision", keep="2027-12-31"),
                inst("i-nobody", None),
                inst("i-fresh", "ml", ran_h=2),
            ]
            adapter = FakeAdapter(Provider.AWS, fleet, capabilities=tuple(Capability))
            adapter.flat_percent = {i.instance_id: 90.0 for i in fleet}
            owners = OwnerNotifier.of(p, environ(hook_server, vision))
            runs: list[dict[str, Any]] = []
            with Ledger(tmp_path / "l.db") as ledger:
                for minutes in (0, 30):  # the second run is inside the notice: nothing again
                    result = run_stop_idle(
                        p, [adapter], apply=True, now=NOW + timedelta(minutes=minutes),
                        ledger=ledger, owners=owners,
                    )  # fmt: skip
                    runs.append(result_record(result))
                rows = [tuple(r) for r in ledger.select("SELECT * FROM audit_alerts_sent")]
            mails = list(box.messages)
            logins = list(box.logins)
    finally:
        vision.close()
    first = {n["instance_id"]: n for n in runs[0]["owner_notices"]}
    assert set(first) == {"i-ml", "i-vision", "i-nobody"}
    assert first["i-ml"]["state"] == "sent" and first["i-ml"]["rule"] == "max-runtime"
    assert first["i-vision"]["rule"] == "exemption"
    assert first["i-nobody"]["state"] == "no destination"
    assert runs[1]["owner_notices"] == []
    # Slack: its documented body, {"text": ...}, once.
    [slack] = hook_server.received
    assert set(slack["body"]) == {"text"}
    text = slack["body"]["text"]
    for needle in ("i-ml", "max-runtime", "$55.04/h", "acts after 2026-12-02 12:00Z", "snooze"):
        assert needle in text
    # The generic webhook: text and a notice object, once.
    [generic] = vision.received
    assert generic["body"]["notice"]["rule"] == "exemption"
    assert generic["body"]["notice"]["usd_per_hour"] == "55.04"
    # Email: once, to the owner's address, logged in with the password from the env.
    [mail] = mails
    assert mail["To"] == "ml-lead@example.org" and "i-ml" in mail["Subject"]
    assert logins == [("gpuplan", PASSWORD)]
    # No secret in the records or the ledger.
    blob = json.dumps(runs, default=str) + repr(rows)
    for secret in ("/services/T0/B0/secret", PASSWORD):
        assert secret not in blob
    assert sorted(r[1] for r in rows) == ["i-ml", "i-vision"]
    assert {r[6] for r in rows} == {"sent"}


def test_a_refused_delivery_is_given_back_and_sent_on_the_next_run(
    hook_server: HookServer, tmp_path: Path
) -> None:
    with smtp_server() as (port, box):
        p = policy(port)
        fleet = [inst("i-ml", "ml")]
        adapter = FakeAdapter(Provider.AWS, fleet, capabilities=tuple(Capability))
        adapter.flat_percent = {"i-ml": 90.0}
        hook_server.status = 500
        box.fail_with = 550
        owners = OwnerNotifier.of(p, environ(hook_server, hook_server))
        with Ledger(tmp_path / "l.db") as ledger:
            result = run_stop_idle(p, [adapter], apply=True, now=NOW, ledger=ledger, owners=owners)
            [told] = result.owner_notices
            assert told.state == "failed" and "tried again next run" in told.detail
            assert any("owner notice i-ml" in line for line in result.problems)
            assert result.failed
            # The notice tag was set; the notice itself goes out when a run marks again:
            # the claim is free, so the same key can be claimed and sent.
            hook_server.status = 200
            from gpuplan.usecases.lifecycle.owner_notices import tell_owners

            again = tell_owners(owners, result.outcomes, ledger, NOW + timedelta(minutes=5))
            assert [a.state for a in again] == ["sent"]
            once_more = tell_owners(owners, result.outcomes, ledger, NOW + timedelta(minutes=9))
            assert [a.state for a in once_more] == ["already sent"]
        assert len(box.messages) == 1
        assert len([r for r in hook_server.received]) == 2  # the refused one, then the sent one


def test_an_unreadable_secret_name_is_a_problem_not_a_leak(hook_server: HookServer) -> None:
    p = Policy.model_validate(
        {
            "version": 1,
            "name": "team",
            "scope": {"aws": {"regions": ["us-east-1"]}},
            "idle": {"allow_data_loss": True, "notice_minutes": 30, "grace_minutes": 0},
            "owners": {"destinations": {"default": {"slack_env": "SLACK_URL"}}},
        }
    )
    owners = OwnerNotifier.of(p, {"SLACK_URL": hook_server.url})
    assert owners is not None
    name, channels = owners.channels("anyone")
    assert (name, channels) == ("default", [])
    assert owners.problems == [
        "owners.destinations.default.slack_env: SLACK_URL may not be read: only GPUPLAN_* or "
        "env_allow"
    ]


def test_a_notice_marked_again_is_not_sent_again(hook_server: HookServer, tmp_path: Path) -> None:
    """The notice tag was lost (removed by hand, a failed tag read-back): the next run marks
    the instance again with a later act-after time, and the owner is still told once."""
    with smtp_server() as (port, _box):
        p = policy(port)
        adapter = FakeAdapter(Provider.AWS, [inst("i-ml", "ml")], capabilities=tuple(Capability))
        adapter.flat_percent = {"i-ml": 90.0}
        owners = OwnerNotifier.of(p, environ(hook_server, hook_server))
        states = []
        with Ledger(tmp_path / "l.db") as ledger:
            for minutes in (0, 7):
                result = run_stop_idle(p, [adapter], apply=True, ledger=ledger, owners=owners,
                                       now=NOW + timedelta(minutes=minutes))  # fmt: skip
                states.append([(n.rule, n.state) for n in result.owner_notices])
                adapter.untag(adapter.instances["i-ml"], ["gpuplan-lifetime-after"])
    assert states == [[("max-runtime", "sent")], [("max-runtime", "already sent")]]
    assert len(hook_server.received) == 1
