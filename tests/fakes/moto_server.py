"""A real ``moto_server`` on loopback for end-to-end tests of the installed CLI.

``server`` starts one per test and yields its URL; point boto3 at it with
``endpoint_url`` (or the CLI with ``AWS_ENDPOINT_URL``). ``installed_bin`` finds a console
script of this venv. ``POLICY`` is the policy those tests run under.
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
from pathlib import Path

import pytest

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


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
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
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
