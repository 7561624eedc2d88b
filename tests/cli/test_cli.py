"""The lifecycle commands in-process on moto: fleet, stop-idle, history, snooze, webhook."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from tests.fakes import aws_scenarios as scenarios
from tests.fakes.aws_world import NOW, World, flat

POLICY = """\
version: 1
name: research
scope:
  aws: {{regions: [us-east-1, us-west-2]}}
  match_labels: {{team: research}}
{extra}
"""
# The scenario types (g5, p5) carry instance-store NVMe that every stop erases: these
# CLI tests allow data loss so they can stop them (test_data_loss.py covers the default).
LOSS = "idle: {allow_data_loss: true}"
KEEP = "idle: {allow_data_loss: false}"
"""What a policy that stops must state (``policy check`` and every run refuse it unstated)."""


def write_policy(tmp_path: Path, extra: str = KEEP) -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY.format(extra=extra), encoding="utf-8")
    return str(path)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with freeze_time(NOW):
        code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fleet_json_and_table(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = {r.name: r for r in scenarios.build(world)}
    base = ["fleet", "--policy", write_policy(tmp_path), "--catalog-dir", str(lc_catalog_dir)]
    code, out, err = run([*base, "--json"], capsys)
    assert code == 0, err
    got = {i["instance_id"]: i for i in json.loads(out)["instances"]}
    idle = got[rows["idle"].instance_id]
    assert (idle["verdict"], idle["max_percent"], idle["idle_minutes"]) == ("idle", 1.0, 60)
    assert idle["month_to_date_usd"] == pytest.approx(1.006 * 24, rel=0.01)
    assert got[rows["busy"].instance_id]["mean_percent"] == 85.0
    assert all(r.instance_id in got for r in rows.values())
    code, out, _ = run(base, capsys)
    assert code == 0 and "MTD $" in out and rows["idle"].instance_id in out


def test_stop_idle_dry_run_then_apply_then_history(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = {r.name: r for r in scenarios.build(world)}
    db = str(tmp_path / "ledger.sqlite3")
    base = ["stop-idle", "--policy", write_policy(tmp_path, LOSS), "--db", db]
    base += ["--catalog-dir", str(lc_catalog_dir)]
    code, out, err = run(base, capsys)
    assert code == 0, err
    assert "dry run: nothing was changed" in out
    assert world.state(rows["idle"].instance_id) == "running"

    code, out, err = run([*base, "--apply", "--json"], capsys)
    assert code == 0, err
    record = json.loads(out)
    assert record["dry_run"] is False and record["summary"]["stopped"] == 3
    assert world.state(rows["idle"].instance_id) == "stopped"

    code, out, _ = run(["history", "--db", db, "--json"], capsys)
    runs = json.loads(out)
    assert [r["dry_run"] for r in runs] == [False, True]
    assert runs[0]["actions"]["stopped"] == 3
    code, out, _ = run(["history", "--db", db], capsys)
    assert code == 0 and "3 stopped" in out


def test_aborted_run_exits_1(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios.build(world)
    policy = write_policy(
        tmp_path, "idle: {breaker_percent: 10, breaker_min_actions: 2, allow_data_loss: true}"
    )
    args = ["stop-idle", "--policy", policy, "--db", str(tmp_path / "l.db"), "--json"]
    code, out, err = run([*args, "--catalog-dir", str(lc_catalog_dir)], capsys)
    assert code == 1 and "breaker_percent = 10%" in err
    assert len([line for line in err.splitlines() if "circuit breaker" in line]) == 1
    assert json.loads(out)["aborted"]


def test_a_capped_run_defers_and_exits_0(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios.build(world)
    policy = write_policy(tmp_path, "idle: {max_actions_per_run: 1, allow_data_loss: true}")
    args = ["stop-idle", "--policy", policy, "--db", str(tmp_path / "l.db"), "--apply"]
    code, out, _ = run([*args, "--catalog-dir", str(lc_catalog_dir)], capsys)
    assert code == 0 and out.count("deferred: cap 1 reached") == 2


def test_snooze_exempts(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    iid = world.launch(tags={"team": "research"})
    world.publish(iid, flat(0.0))
    policy = write_policy(tmp_path)
    code, out, err = run(["snooze", iid, "--for", "4h", "--policy", policy], capsys)
    assert code == 0, err
    assert world.tags(iid)["gpuplan-snooze-until"] == "20261202t141730z"
    args = ["stop-idle", "--policy", policy, "--db", str(tmp_path / "l.db"), "--json"]
    code, out, _ = run([*args, "--apply", "--catalog-dir", str(lc_catalog_dir)], capsys)
    (decision,) = json.loads(out)["decisions"]
    assert (decision["verdict"], decision["action"]) == ("exempt", "none")
    code, _, _ = run(["snooze", iid, "--clear", "--policy", policy], capsys)
    assert code == 0 and "gpuplan-snooze-until" not in world.tags(iid)
    code, _, err = run(["snooze", "i-0nothere", "--for", "1h", "--policy", policy], capsys)
    assert code == 2 and "not a GPU instance" in err
    code, _, err = run(["snooze", iid, "--for", "soon", "--policy", policy], capsys)
    assert code == 2 and "--for" in err


class _Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Hook.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[str]:
    _Hook.received = []
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def test_webhook_per_applied_run(
    world: World,
    tmp_path: Path,
    lc_catalog_dir: Path,
    webhook: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    idle = world.launch(tags={"team": "research"})
    world.publish(idle, flat(0.0))
    silent = world.launch(tags={"team": "research"})
    policy = write_policy(
        tmp_path,
        LOSS + f"\nnotify: {{webhook_url: '{webhook}', allow_insecure_webhook: true}}",
    )
    args = ["stop-idle", "--policy", policy, "--db", str(tmp_path / "l.db")]
    args += ["--catalog-dir", str(lc_catalog_dir)]
    run(args, capsys)
    assert _Hook.received == []  # a dry run sends nothing
    code, _, err = run([*args, "--apply"], capsys)
    assert code == 0, err
    (message,) = _Hook.received
    text = str(message["text"])
    assert f"stopped: {idle}" in text
    assert f"install or fix the GPU metrics agent on {silent}" in text


def test_notify_action_never_stops(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    iid = world.launch(tags={"team": "research"})
    world.publish(iid, flat(0.0))
    policy = write_policy(tmp_path, "idle: {action: notify}")
    args = ["stop-idle", "--policy", policy, "--db", str(tmp_path / "l.db"), "--apply"]
    code, out, _ = run([*args, "--json", "--catalog-dir", str(lc_catalog_dir)], capsys)
    (decision,) = json.loads(out)["decisions"]
    assert (decision["planned_action"], decision["action"]) == ("notify", "notified")
    assert world.state(iid) == "running" and code == 0


def test_cli_start_up_loads_no_cloud_sdk() -> None:
    code = (
        "import sys; from gpuplan.cli.main import build_parser; build_parser(); "
        "print(sorted(m for m in ('boto3', 'botocore') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_data_loss_skips_are_shown_counted_and_said(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 25: on main fleet said nothing, the dry-run summary read "planned: 3 stop" for
    # instances that were all skipped for their instance store, and --apply exited 0 mutely.
    rows = {r.name: r for r in scenarios.build(world)}
    policy = write_policy(tmp_path, "idle: {allow_data_loss: false}")
    catalog = ["--catalog-dir", str(lc_catalog_dir)]
    code, out, _ = run(["fleet", "--policy", policy, "--json", *catalog], capsys)
    got = {i["instance_id"]: i for i in json.loads(out)["instances"]}
    assert code == 0 and "instance-store" in got[rows["idle"].instance_id]["skip"]
    code, out, _ = run(["fleet", "--policy", policy, *catalog], capsys)
    assert "once idle, stop-idle skips it: stop erases" in out
    args = ["stop-idle", "--policy", policy, "--db", str(tmp_path / "l.db"), *catalog]
    code, out, err = run(args, capsys)
    summary = out.strip().splitlines()[-1]
    assert code == 0 and "planned:" not in summary
    assert "skipped: 4 (3 data loss, 1 one-time spot)" in summary, summary
    code, out, err = run([*args, "--apply"], capsys)
    assert code == 0 and "stopped" not in out.strip().splitlines()[-1]
    notice = [line for line in err.splitlines() if "allow_data_loss: false" in line]
    assert notice == [
        "gpuplan: notice: 3 idle instances left running: the action would erase local "
        "disks and the policy has allow_data_loss: false"
    ]
