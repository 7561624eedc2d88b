"""The end-to-end harness: GCP and Azure wire fakes over TLS, a child environment with
the real credential chains pointed at them, and a policy naming their endpoints.

Nothing in the child process knows it is under test. The policy names the endpoints
(``compute_endpoint``, ``monitoring_endpoint``, ``arm_endpoint``, ``metrics_endpoint``);
the credential chains are the real ones: Application Default Credentials from a
service-account key file, and azure-identity's environment credential against an
Entra authority at ``AZURE_AUTHORITY_HOST``. TLS verification stays on: the fakes'
certificates come from a test CA that the child trusts through ``REQUESTS_CA_BUNDLE``,
``SSL_CERT_FILE`` and ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.azure_arm import AzureFake
from tests.fakes.gcp_compute import GcpComputeFake
from tests.fakes.gcp_monitoring import MonitoringFake, serve_monitoring
from tests.fakes.http import serve
from tests.fakes.identity import EntraFake, google_token_route
from tests.fakes.scenarios import TEAM

PROJECT = "research-proj"
SUB = "00000000-0000-0000-0000-0000000000e2"
GPUPLAN = Path(sys.executable).with_name("gpuplan")


@dataclass
class Clouds:
    compute: GcpComputeFake
    monitoring: MonitoringFake
    azure: AzureFake
    entra: EntraFake
    google_grants: list[dict[str, str]]
    urls: dict[str, str]


@contextmanager
def running_clouds(test_ca: trustme.CA) -> Iterator[Clouds]:
    compute = GcpComputeFake(require_bearer=True)
    grants: list[dict[str, str]] = []
    google_token_route(compute, grants)
    monitoring = MonitoringFake(require_bearer=True)
    azure = AzureFake()
    entra = EntraFake()
    cert = test_ca.issue_cert("127.0.0.1")
    grpc_tls = grpc.ssl_server_credentials(
        [(cert.private_key_pem.bytes(), b"".join(p.bytes() for p in cert.cert_chain_pems))]
    )
    with (
        serve(compute, test_ca) as compute_url,
        serve_monitoring(monitoring, grpc_tls) as monitoring_address,
        serve(azure, test_ca) as arm_url,
        serve(entra, test_ca) as entra_url,
    ):
        urls = {
            "compute": compute_url,
            "monitoring": f"https://{monitoring_address}",
            "arm": arm_url,
            "entra": entra_url,
        }
        yield Clouds(compute, monitoring, azure, entra, grants, urls)


def service_account_key(path: Path, token_uri: str) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    info = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": f"gpuplan@{PROJECT}.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info), encoding="utf-8")


def child_env(tmp: Path, clouds: Clouds, ca_file: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    key = tmp / "sa.json"
    service_account_key(key, clouds.urls["compute"] + "/token")
    env.update(
        HOME=str(tmp),
        GPUPLAN_DB=str(tmp / "ledger.sqlite3"),
        GOOGLE_APPLICATION_CREDENTIALS=str(key),
        CLOUDSDK_CONFIG=str(tmp / "gcloud"),
        AZURE_TENANT_ID="11111111-1111-1111-1111-111111111111",
        AZURE_CLIENT_ID="22222222-2222-2222-2222-222222222222",
        AZURE_CLIENT_SECRET="s3cret",
        AZURE_AUTHORITY_HOST=clouds.urls["entra"],
        REQUESTS_CA_BUNDLE=str(ca_file),
        SSL_CERT_FILE=str(ca_file),
        GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=str(ca_file),
    )
    return env


def write_policy(tmp: Path, clouds: Clouds) -> Path:
    text = f"""\
version: 1
name: e2e
idle:
  allow_data_loss: false
scope:
  gcp:
    projects: [{PROJECT}]
    compute_endpoint: {clouds.urls["compute"]}
    monitoring_endpoint: {clouds.urls["monitoring"]}
  azure:
    subscriptions: ["{SUB}"]
    arm_endpoint: {clouds.urls["arm"]}
    metrics_endpoint: {clouds.urls["arm"]}
  match_labels: {{team: {TEAM["team"]}}}
"""
    path = tmp / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run_gpuplan(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GPUPLAN), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
