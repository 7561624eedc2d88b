"""``gpuplan catalog refresh`` for the GPU clouds, through their own price APIs, faked at
the wire (a loopback HTTP server with the APIs' recorded shapes; no real network).

The key comes from the environment and goes in the Authorization header only: it never
appears in a URL, in the output or in an error. Without a key, or for a cloud with no
price API, the provider is skipped with one line and the refresh of the others goes on.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from tests.providers.pricing.gpu_cloud_fake import (
    FakeApi,
    lambda_instance_types,
    runpod_gpu_types,
    serve,
    vast_offers,
)

KEY = "sk-test-0123456789abcdef"
BUNDLED = Path(__file__).resolve().parents[3] / "pricing"


def _bundled(name: str) -> dict[str, dict[str, str]]:
    return _rows(BUNDLED, name)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("LAMBDA_API_KEY", "RUNPOD_API_KEY", "VAST_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _refresh(folder: Path, *providers: str) -> list[str]:
    return [
        "catalog", "refresh", "--provider", ",".join(providers), "--json",
        "--no-discover", "--catalog-dir", str(folder),
    ]  # fmt: skip


def _rows(folder: Path, name: str) -> dict[str, dict[str, str]]:
    with (folder / name).open(newline="") as f:
        return {r["instance_type"]: r for r in csv.DictReader(f)}


@pytest.fixture
def lambda_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    prices = {
        name: int(Decimal(row["on_demand_hourly"]) * 100)
        for name, row in _bundled("lambda.csv").items()
    }
    prices |= {"gpu_8x_h100_sxm5": 3352, "gpu_8x_b300_sxm6": 9999}

    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET" and path == "/api/v1/instance-types":
            return 200, lambda_instance_types(prices)
        return 404, {"error": "not found"}

    api = FakeApi(answer)
    with serve(api) as base:
        monkeypatch.setenv("GPUPLAN_LAMBDA_ENDPOINT", f"{base}/api/v1")
        yield api


def test_lambda_prices_come_from_its_api_with_the_key_in_the_header_only(
    lambda_api: FakeApi,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LAMBDA_API_KEY", KEY)
    assert main(_refresh(tmp_path, "lambda")) == 0
    out, err = capsys.readouterr()
    (seen,) = lambda_api.seen
    assert seen.headers["Authorization"] == f"Bearer {KEY}" and KEY not in seen.path
    assert KEY not in out and KEY not in err
    (report,) = json.loads(out)["providers"]
    assert report["ok"] and report["skipped"] is None
    moved = {c["offer"]: c["new"] for c in report["changed"]}
    assert moved == {"lambda/gpu_8x_h100_sxm5/us-east-1": 33.52}
    assert "gpu_8x_b300_sxm6" in " ".join(report["notes"])  # listed, not in the catalog
    rows = _rows(tmp_path, "lambda.csv")
    assert rows["gpu_8x_h100_sxm5"]["on_demand_hourly"] == "33.52"
    assert rows["gpu_8x_h100_sxm5"]["as_of"] != "2026-09-25"  # the day of the reading
    assert rows["gpu_1x_h100_sxm5"]["on_demand_hourly"] == "4.29"


def test_without_a_key_the_cloud_is_skipped_in_one_line_and_the_others_go_on(
    lambda_api: FakeApi, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*_refresh(tmp_path, "lambda", "coreweave")[:-3], "--catalog-dir", str(tmp_path)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    skipped = {p["provider"]: p["skipped"] for p in report["providers"]}
    assert "LAMBDA_API_KEY is not set" in skipped["lambda"]
    assert "no price API" in skipped["coreweave"]
    assert report["ok"] and lambda_api.seen == []
    assert not (tmp_path / "lambda.csv").exists()
    args = ["catalog", "refresh", "--provider", "lambda", "--catalog-dir", str(tmp_path)]
    assert main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [lines[0]] and lines[0].startswith("lambda: skipped: LAMBDA_API_KEY")


def test_a_refused_key_is_one_line_without_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api = FakeApi(lambda method, path, body: (401, {"error": {"code": "unauthorized"}}))
    with serve(api) as base:
        monkeypatch.setenv("GPUPLAN_LAMBDA_ENDPOINT", f"{base}/api/v1")
        monkeypatch.setenv("LAMBDA_API_KEY", KEY)
        assert main(_refresh(tmp_path, "lambda")) == 1
    out, err = capsys.readouterr()
    (report,) = json.loads(out)["providers"]
    assert "HTTP 401" in report["failures"][""] and KEY not in out + err


def test_runpod_prices_each_tier_from_graphql(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = [
        ("NVIDIA H100 80GB HBM3", 3.79, 2.49),
        ("NVIDIA H100 PCIe", 2.89, 1.99),
        ("NVIDIA H100 NVL", 3.19, 2.59),
        ("NVIDIA H200", 4.59, 3.59),
        ("NVIDIA B200", 6.79, None),
        ("NVIDIA A100-SXM4-80GB", 1.79, 1.39),
        ("NVIDIA A100 80GB PCIe", 1.79, 1.19),
        ("NVIDIA L40S", 1.09, 0.79),
    ]
    gpu_types = runpod_gpu_types(listed)
    api = FakeApi(lambda method, path, body: (200, gpu_types))
    with serve(api) as base:
        monkeypatch.setenv("GPUPLAN_RUNPOD_ENDPOINT", f"{base}/graphql")
        monkeypatch.setenv("RUNPOD_API_KEY", KEY)
        assert main(_refresh(tmp_path, "runpod")) == 0
    (seen,) = api.seen
    assert seen.method == "POST" and "gpuTypes" in seen.body["query"]
    assert seen.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in "".join(capsys.readouterr())
    rows = _rows(tmp_path, "runpod.csv")
    assert rows["h100-sxm.8x.secure"]["on_demand_hourly"] == "30.32"
    assert rows["h100-sxm.1x.community"]["on_demand_hourly"] == "2.49"
    assert "b200.1x.community" not in rows  # no community price listed now: gone
    assert rows["b200.8x.secure"]["on_demand_hourly"] == "54.32"


def test_vast_quotes_the_median_of_verified_offers_not_the_cheapest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        if body["gpu_name"]["eq"] == "H100 SXM":
            return 200, vast_offers([0.35, 1.90, 2.10, 2.30, 9.00])
        if body["gpu_name"]["eq"] == "H200":
            return 200, vast_offers([5.2])  # one offer: too few for a statistic
        return 200, vast_offers([1.5, 1.7, 1.8], gpus=2)

    api = FakeApi(answer)
    with serve(api) as base:
        monkeypatch.setenv("GPUPLAN_VAST_ENDPOINT", f"{base}/api/v0/bundles/")
        assert main(_refresh(tmp_path, "vast")) == 1  # a third of the rows would vanish
        assert not (tmp_path / "vast.csv").exists()
        capsys.readouterr()
        assert main([*_refresh(tmp_path, "vast"), "--force"]) == 0
    queries = [s.body for s in api.seen]
    assert all(q["verified"] == {"eq": True} and q["rentable"] == {"eq": True} for q in queries)
    report = json.loads(capsys.readouterr().out)["providers"][0]
    assert "h100-sxm: median $2.1000/GPU-h of 5 verified offers" in report["notes"]
    assert "h200: 1 verified offer(s), fewer than 3: not quoted" in report["notes"]
    rows = _rows(tmp_path, "vast.csv")
    assert rows["h100-sxm.1x"]["on_demand_hourly"] == "2.1"
    assert rows["a100-sxm.1x"]["on_demand_hourly"] == "1.7"
    assert "h200.1x" not in rows
