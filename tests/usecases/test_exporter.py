"""``gpuplan exporter`` end to end: a stop-idle run on the fake fleet, then the scrape
read back with Prometheus's own text parser, from stdout, a textfile and /metrics."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuplan.cli.main import main
from gpuplan.usecases.audit.exporter import LedgerCollector, serve

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "docs" / "examples" / "demo-policy.yaml"
SECRET = "hunter2hunter2"


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ledger holding one dry-run stop-idle run of the demo fleet, whose idle
    instance carries a tag value with a credential in it."""
    fleet = json.loads((ROOT / "docs" / "examples" / "demo-fleet.json").read_text())
    fleet["instances"][1]["labels"]["owner"] = f"https://bob:{SECRET}@git.example.com/x"
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet))
    db = tmp_path / "ledger.db"
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(path))
    monkeypatch.setenv("GPUPLAN_WEBHOOK_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("GPUPLAN_DB", str(db))
    assert main(["stop-idle", "--policy", str(POLICY)]) == 0
    return db


def scrape(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def fleet(verdict: str) -> tuple[tuple[str, str], ...]:
    return (("account", "123456789012"), ("policy", "demo-research"), ("provider", "aws"),
            ("team", "research"), ("verdict", verdict))  # fmt: skip


def test_the_scrape_says_what_the_run_saw(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exporter"]) == 0
    text = capsys.readouterr().out
    got = scrape(text)
    assert got[("gpuplan_cost_dollars_per_hour", fleet("idle"))] == 1.006
    assert got[("gpuplan_cost_dollars_per_hour", fleet("busy"))] == 55.04
    assert got[("gpuplan_gpus", fleet("busy"))] == 8
    assert got[("gpuplan_instances", fleet("exempt"))] == 1
    assert got[("gpuplan_metrics_coverage_ratio", (("policy", "demo-research"),))] == 1.0
    run = (("kind", "stop-idle"), ("policy", "demo-research"))
    assert got[("gpuplan_last_run_success", run)] == 1 and got[("gpuplan_last_run_dry_run", run)]
    assert got[("gpuplan_runs_total", (*run, ("status", "ok")))] == 1
    assert got[("gpuplan_ledger_up", ())] == 1
    assert SECRET not in text and "bob:" not in text


def test_an_applied_stop_leaves_the_idle_gauge_and_counts_the_action(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["stop-idle", "--policy", str(POLICY), "--apply"])  # exit 1: webhook undelivered
    capsys.readouterr()
    assert main(["exporter"]) == 0
    got = scrape(capsys.readouterr().out)
    assert ("gpuplan_cost_dollars_per_hour", fleet("idle")) not in got
    stopped = (("action", "stop"), ("outcome", "stopped"), ("policy", "demo-research"),
               ("provider", "aws"))  # fmt: skip
    assert got[("gpuplan_actions_total", stopped)] == 1
    run = (("kind", "stop-idle"), ("policy", "demo-research"))
    assert got[("gpuplan_last_run_success", run)] == 0  # failed: the webhook
    assert got[("gpuplan_last_run_actions", (*run[:1], ("outcome", "stopped"), run[1]))] == 1


def test_textfile_is_written_whole_for_node_exporter(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "collector"
    out.mkdir()
    assert main(["exporter", "--textfile", str(out / "gpuplan.prom")]) == 0
    assert [p.name for p in out.iterdir()] == ["gpuplan.prom"]  # no temporary left
    got = scrape((out / "gpuplan.prom").read_text())
    assert got[("gpuplan_cost_dollars_per_hour", fleet("idle"))] == 1.006


def test_metrics_endpoint_reads_the_ledger_on_each_scrape(ledger: Path) -> None:
    collector = LedgerCollector(str(ledger), {}, team_label="team", catalog_dir=None)
    server, _thread = serve(collector, "127.0.0.1", 0)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        first = scrape(httpx.get(url, timeout=10).text)
        assert first[("gpuplan_runs_total", (("kind", "stop-idle"),
                      ("policy", "demo-research"), ("status", "ok")))] == 1  # fmt: skip
        assert main(["stop-idle", "--policy", str(POLICY)]) == 0
        again = scrape(httpx.get(url, timeout=10).text)
        assert again[("gpuplan_runs_total", (("kind", "stop-idle"),
                      ("policy", "demo-research"), ("status", "ok")))] == 2  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()


def test_a_file_that_is_not_a_ledger_is_ledger_up_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "garbage.db"
    bad.write_bytes(b"this is not a database" * 100)
    assert main(["exporter", "--db", str(bad)]) == 0
    assert scrape(capsys.readouterr().out)[("gpuplan_ledger_up", ())] == 0


def test_json_lists_the_families(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exporter", "--json"]) == 0
    names = {f["name"] for f in json.loads(capsys.readouterr().out)}
    assert {"gpuplan_cost_dollars_per_hour", "gpuplan_budget_forecast_dollars",
            "gpuplan_actions_total", "gpuplan_catalog_price_age_seconds"} <= names  # fmt: skip


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--listen", "9877"], "HOST:PORT"),
        (["--listen", "127.0.0.1:99999"], "0 to 65535"),
        (["--textfile", "metrics.txt"], "*.prom"),
        (["--textfile", "/no/such/folder/x.prom"], "not an existing folder"),
        (["--team-label", "a\nb"], "printable"),
        (["--json", "--textfile", "x.prom"], "not allowed with"),
    ],
)
def test_bad_flags_exit_2_with_one_line(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["exporter", *args])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_a_port_in_use_is_one_line_and_exit_2(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    collector = LedgerCollector(str(ledger), {}, team_label="team", catalog_dir=None)
    server, _thread = serve(collector, "127.0.0.1", 0)
    try:
        port = server.server_address[1]
        assert main(["exporter", "--listen", f"127.0.0.1:{port}"]) == 2
    finally:
        server.shutdown()
        server.server_close()
    assert "Address already in use" in capsys.readouterr().err


def test_the_listening_command_serves_until_sigterm(ledger: Path) -> None:
    """The real command in its own process: it names the bound port, serves /metrics,
    and SIGTERM (Kubernetes, systemd) ends it with exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuplan", "exporter", "--listen", "127.0.0.1:0",
         "--db", str(ledger)],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        got = scrape(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text)
        assert got[("gpuplan_cost_dollars_per_hour", fleet("idle"))] == 1.006
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
