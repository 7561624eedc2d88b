"""Hostile input files, made fresh in a temporary folder for each fuzz module.

Every kind of file a loader may be handed by mistake or by malice: missing, a folder,
a FIFO with no writer (an ``open`` that would block), ``/dev/zero`` (endless), a sparse
file far over every size limit, empty, NUL bytes, invalid UTF-8, and per format the
classic breakers (deep nesting, alias bombs, 5,000-digit integers, 1e400, NaN,
impossible dates, hostile URLs, ports out of range).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

VALID_POLICY = (
    "version: 1\nname: fuzz\nscope:\n  aws: {regions: [us-east-1]}\n"
    "budget: {monthly_usd: 1000}\n"
    "idle: {threshold_percent: 5, allow_data_loss: false, window_minutes: 60}\n"
)
BIG_INT = "9" * 5000


def bad_files(root: Path) -> dict[str, Path]:
    """Files no loader should accept, by a short name; ``root`` must exist."""
    files: dict[str, Path] = {
        "missing": root / "does-not-exist.yaml",
        "folder": root / "a-folder",
        "dev-zero": Path("/dev/zero"),
        "dev-null": Path("/dev/null"),
        "fifo": root / "a-fifo",
        "huge-sparse": root / "huge.yaml",
        "empty": root / "empty.yaml",
        "nul-bytes": root / "nul.yaml",
        "bad-utf8": root / "latin1.yaml",
    }
    files["folder"].mkdir(exist_ok=True)
    if not files["fifo"].exists():
        os.mkfifo(files["fifo"])
    with files["huge-sparse"].open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: no disk used, over every limit
    files["empty"].write_bytes(b"")
    files["nul-bytes"].write_bytes(b"version: 1\x00\x00\nname: x\n")
    files["bad-utf8"].write_bytes("name: caf\xe9\n".encode("latin-1"))
    return files


def bad_policies(root: Path) -> dict[str, Path]:
    """Policy files that must be refused with one line and exit 2."""
    texts = {
        "big-int": VALID_POLICY + f"  max_actions_per_run: {BIG_INT}\n",
        "big-int-4000": VALID_POLICY.replace("1000}", "9" * 4000 + "}"),
        "inf-float": VALID_POLICY.replace("threshold_percent: 5", "threshold_percent: 1.0e+400"),
        "nan": VALID_POLICY.replace("threshold_percent: 5", "threshold_percent: .nan"),
        "negative-inf": VALID_POLICY.replace("monthly_usd: 1000", "monthly_usd: -.inf"),
        "bad-date": VALID_POLICY.replace("1000}", "2026-13-45}"),
        "deep": "version: 1\nname: x\nidle: " + "[" * 5000 + "]" * 5000 + "\n",
        "alias-bomb": "a: &a [x,x,x,x,x,x,x,x,x]\n"
        + "".join(
            f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "python-tag": "version: 1\nname: !!python/object/apply:os.system ['true']\n",
        "tab-indent": "version: 1\nname: x\nidle:\n\tthreshold_percent: 5\n",
        "port-99999": VALID_POLICY + "notify: {webhook_url: 'https://hooks.example.com:99999/x'}\n",
        "port-zero": VALID_POLICY + "notify: {webhook_url: 'https://hooks.example.com:0/x'}\n",
        "http-webhook": VALID_POLICY + "notify: {webhook_url: 'http://hooks.example.com/x'}\n",
        "metadata-webhook": VALID_POLICY
        + "notify: {webhook_url: 'http://169.254.169.254/latest', allow_insecure_webhook: true}\n",
        "loopback-webhook": VALID_POLICY + "notify: {webhook_url: 'https://127.0.0.1:8443/x'}\n",
        "decimal-ip-webhook": VALID_POLICY + "notify: {webhook_url: 'https://2130706433/x'}\n",
        "short-ip-webhook": VALID_POLICY + "notify: {webhook_url: 'https://127.1/x'}\n",
        "file-webhook": VALID_POLICY + "notify: {webhook_url: 'file:///etc/passwd'}\n",
        "secret-env": VALID_POLICY
        + "notify: {webhook_url: 'https://hooks.example.com/${AWS_SECRET_ACCESS_KEY}'}\n",
        "home-env": VALID_POLICY + "notify: {webhook_url: 'https://${HOME}.example.com/x'}\n",
        "prom-port": VALID_POLICY.replace(
            "window_minutes: 60}",
            "window_minutes: 60, metrics: {prometheus: {url: 'http://u:p@prom:70000'}}}",
        ),
        "prom-ftp": VALID_POLICY.replace(
            "window_minutes: 60}", "window_minutes: 60, metrics: {prometheus: {url: 'ftp://p'}}}"
        ),
        "long-scalar": VALID_POLICY.replace("name: fuzz", "name: " + "a" * 100_000),
        "list-root": "- 1\n- 2\n",
        "unknown-key": VALID_POLICY + "secrets: yes\n",
        "version-2": VALID_POLICY.replace("version: 1", "version: 2"),
        "env-allow-bad": VALID_POLICY + "env_allow: ['not a name']\n",
        "huge-minutes": VALID_POLICY.replace("window_minutes: 60", "window_minutes: 99999999h"),
        "bool-number": VALID_POLICY.replace("threshold_percent: 5", "threshold_percent: true"),
    }
    out = {}
    for name, text in texts.items():
        path = root / f"policy-{name}.yaml"
        path.write_text(text, encoding="utf-8")
        out[name] = path
    return out


def bad_job_files(root: Path) -> dict[str, Path]:
    texts = {
        "job-big-int.json": '{"params": ' + BIG_INT + "}",
        "job-deep.json": "[" * 100_000 + "]" * 100_000,
        "job-list.yaml": "- 1\n",
        "job-unknown.yaml": "nonsense: 1\n",
        "job-date.yaml": "params: 2026-13-45\n",
        "job-deep.yaml": "params: " + "[" * 5000 + "]" * 5000 + "\n",
        "job-bad.json": "{",
        "job-nan.yaml": "params: .nan\ngpu: H100\n",
        "job-inf.json": '{"params": 1e400, "gpu": "H100"}',
    }
    out = {}
    for name, text in texts.items():
        path = root / name
        path.write_text(text, encoding="utf-8")
        out[name] = path
    return out


def bad_trace_dirs(root: Path) -> dict[str, Path]:
    """Trace folders (fleet.csv + one CSV per instance) that must be refused."""
    cases = {
        "no-fleet": {},
        "bad-header": {"fleet.csv": "a,b\n1,2\n"},
        "nan-price": {
            "fleet.csv": "instance_id,instance_type,hourly_usd\ni1,g5.xlarge,nan\n",
            "i1.csv": "minute,utilisation\n0,1\n",
        },
        "huge-price": {
            "fleet.csv": f"instance_id,instance_type,hourly_usd\ni1,g5.xlarge,{BIG_INT}\n",
            "i1.csv": "minute,utilisation\n0,1\n",
        },
        "bad-minute": {
            "fleet.csv": "instance_id,instance_type,hourly_usd\ni1,g5.xlarge,1\n",
            "i1.csv": "minute,utilisation\nx,1\n",
        },
        "inf-util": {
            "fleet.csv": "instance_id,instance_type,hourly_usd\ni1,g5.xlarge,1\n",
            "i1.csv": "minute,utilisation\n0,1e400\n",
        },
        "missing-series": {"fleet.csv": "instance_id,instance_type,hourly_usd\ni1,g5.xlarge,1\n"},
        "traversal": {
            "fleet.csv": "instance_id,instance_type,hourly_usd\n../../etc/passwd,g5.xlarge,1\n"
        },
    }
    out = {}
    for name, files in cases.items():
        folder = root / f"traces-{name}"
        folder.mkdir(exist_ok=True)
        for file, text in files.items():
            (folder / file).write_text(text, encoding="utf-8")
        out[name] = folder
    fifo_dir = root / "traces-fifo"
    fifo_dir.mkdir(exist_ok=True)
    if not (fifo_dir / "fleet.csv").exists():
        os.mkfifo(fifo_dir / "fleet.csv")
    out["fifo"] = fifo_dir
    return out


def fake_fleet(root: Path) -> Path:
    """A ``GPUPLAN_FAKE_FLEET`` file: lifecycle commands run offline against it."""
    path = root / "fleet.json"
    path.write_text(
        json.dumps(
            {
                "instances": [
                    {
                        "provider": "aws",
                        "account": "123456789012",
                        "region": "us-east-1",
                        "instance_id": "i-0fuzz",
                        "instance_type": "g5.xlarge",
                        "state": "running",
                        "started_at": "2026-11-01T00:00:00Z",
                        "labels": {"team": "fuzz"},
                        "hourly_usd": "1.006",
                    }
                ],
                "utilisation_percent": {"i-0fuzz": 0.5},
            }
        ),
        encoding="utf-8",
    )
    return path
