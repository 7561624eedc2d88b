"""What deploy/ says about sharded runs holds: the Indexed Job manifest is one gpuplan
can run, and the PostgreSQL setup SQL in deploy/README.md works on a real server."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplan.cli.main import build_parser
from gpuplan.ledger import PENDING, ActionRecord, Ledger, LedgerError
from tests.ledger.pgserver import PASSWORD, ROLE, PgServer

NOW = datetime(2026, 12, 2, 10, 15, tzinfo=UTC)

MANIFEST = Path(__file__).parents[2] / "deploy" / "kubernetes-indexed-job.yaml"


def _job() -> tuple[dict[str, Any], dict[str, Any]]:
    cron = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert cron["kind"] == "CronJob" and cron["spec"]["concurrencyPolicy"] == "Forbid"
    job = cron["spec"]["jobTemplate"]["spec"]
    [container] = job["template"]["spec"]["containers"]
    return job, container


def test_indexed_with_the_shard_count_equal_to_completions() -> None:
    job, container = _job()
    assert job["completionMode"] == "Indexed"
    assert job["completions"] == job["parallelism"]
    env = {e["name"]: e for e in container["env"]}
    assert int(env["GPUPLAN_SHARDS"]["value"]) == job["completions"]


def test_the_ledger_url_and_password_come_from_a_secret_not_the_manifest() -> None:
    _, container = _job()
    env = {e["name"]: e for e in container["env"]}
    for name in ("GPUPLAN_DB", "PGPASSWORD"):
        assert "value" not in env[name] and "secretKeyRef" in env[name]["valueFrom"]
    assert "password" not in str(container["args"]).lower()


def test_the_arguments_parse_as_a_gpuplan_command() -> None:
    _, container = _job()
    args = build_parser().parse_args(container["args"])
    assert args.command == "stop-idle" and args.apply is True and args.shard is None


def _readme_sql(block: int) -> list[str]:
    """The statements of deploy/README.md's ``block``-th sql block (1-based), with
    psql's ``\\password ROLE`` as the ALTER ROLE it stands for."""
    text = (Path(__file__).parents[2] / "deploy" / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", text, flags=re.S)
    statements: list[str] = []
    for line in blocks[block - 1].splitlines():
        if line.startswith("\\password "):
            statements.append(f"ALTER ROLE {line.split()[1]} PASSWORD '{PASSWORD}'")
        elif line.strip():
            statements.append(line.rstrip(";"))
    return statements


def test_the_documented_setup_and_run_only_role_work(pg: PgServer, tmp_path: Path) -> None:
    setup = _readme_sql(1)
    assert setup[-1] == "CREATE DATABASE gpuplan OWNER gpuplan"
    pg.admin("DROP DATABASE IF EXISTS gpuplan WITH (FORCE)")
    for statement in setup[1:]:  # the gpuplan role exists already (the fixture made it)
        pg.admin(statement)
    try:
        owner = pg.dsn("gpuplan", password=True)
        with Ledger(owner) as ledger:  # the owner migrates
            assert ledger.count("runs") == 0
        pg.admin("DROP ROLE IF EXISTS gpuplan_run")
        for statement in _readme_sql(2):
            pg.admin(statement, "gpuplan")
        runner = owner.replace(f"{ROLE}:", "gpuplan_run:")
        with Ledger(runner) as ledger:
            run = ledger.start_run("stop-idle", "team-a", NOW, dry_run=False)
            ledger.record_action(run, ActionRecord("aws", "r", "i-1", "stop", PENDING, NOW))
            ledger.settle_action(1, "stopped", "", NOW)
            assert ledger.mark_alert("team-a", "2026-12", 50, NOW)
        with pytest.raises(LedgerError, match="permission denied"), Ledger(runner) as ledger:
            ledger.select("CREATE TABLE sneaky (x int)")
    finally:
        pg.admin("DROP DATABASE IF EXISTS gpuplan WITH (FORCE)")
        pg.admin("DROP ROLE IF EXISTS gpuplan_run")
