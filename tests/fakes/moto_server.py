"""A real ``moto_server`` on loopback for end-to-end tests of the installed CLI.

``server`` gives each test the worker's one server, reset, by URL; point boto3 at it with
``endpoint_url`` (or the CLI with ``AWS_ENDPOINT_URL``). ``installed_bin`` finds a console
script of this venv. ``POLICY`` is the policy those tests run under; ``world_on`` a moto
world whose EC2 and CloudWatch clients talk to the server, ``idle_periods`` the metric
periods that make an instance idle under that policy's 30-minute window.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import boto3
import pytest

from gpuplan.core.lifecycle.idle import IdleRule, period_starts
from tests.fakes.aws_world import World

POLICY = """\
version: 1
name: e2e
scope:
  aws: {regions: [us-east-1]}
  match_labels: {team: research}
idle:
  window_minutes: 30
  grace_minutes: 0
  allow_data_loss: true  # g5.xlarge carries a 250 GB NVMe instance store
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def installed_bin(name: str) -> str:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else str(shutil.which(name))


@pytest.fixture(scope="session")
def _moto_server_process() -> Iterator[str]:
    """One moto_server per test process (per xdist worker), on a port the kernel picked."""
    port = _free_port()
    env = {**os.environ, "MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}
    proc = subprocess.Popen(
        [installed_bin("moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    message = f"moto_server exited ({proc.returncode}) on port {port}"
                    raise RuntimeError(message) from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def server(_moto_server_process: str) -> str:
    """The worker's moto_server, emptied: every test starts on a fresh AWS (moto's reset
    API), without paying a server start and moto's EC2 set-up again."""
    reset = urllib.request.Request(_moto_server_process + "/moto-api/reset", method="POST")
    urllib.request.urlopen(reset, timeout=30).close()
    return _moto_server_process


def world_on(url: str) -> World:
    """A moto world in us-east-1 whose EC2 and CloudWatch clients talk to ``url``."""
    session = boto3.Session(region_name="us-east-1")
    world = World(session)
    for service in ("ec2", "cloudwatch"):
        world.clients[(service, "us-east-1")] = session.client(
            service, region_name="us-east-1", endpoint_url=url
        )
    return world


def idle_periods(now: datetime) -> list[datetime]:
    """Every period of ``POLICY``'s 30-minute window at ``now``, plus the next one."""
    rule = IdleRule(window_minutes=30)
    return [*period_starts(rule, now), period_starts(rule, now + timedelta(minutes=5))[-1]]
