"""Secrets stay put: URL parsing and redaction, the webhook address rules, ``${VAR}``
expansion limited to GPUPLAN_* and ``env_allow``, and ``policy show`` redacting all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.errors import InputError
from gpuplan.core.policy import Policy
from gpuplan.core.urls import redacted_webhook, webhook_url_problem
from gpuplan.loaders import policy_file
from gpuplan.providers.url_parts import redact_url, split_url

BASE = "version: 1\nname: t\n"


def parse_policy(data: str, path: str, **kwargs: object) -> Policy:
    """The loader with the parser every command hands it (httpx's, the one that fetches)."""
    return policy_file.parse_policy(data, path, split=split_url, **kwargs)  # type: ignore[arg-type]


def webhook_problem(url: str, *, allow_insecure: bool) -> str | None:
    try:
        parts = split_url(url)
    except ValueError as exc:
        return str(exc)
    return webhook_url_problem(parts, redacted_webhook(parts), allow_insecure=allow_insecure)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://hooks.example.com:99999/x", "port must be from 1 to 65535, got 99999"),
        ("https://hooks.example.com:0/x", "port must be from 1 to 65535, got 0"),
        ("https://hooks.example.com:8a/x", "port must be a number"),
        ("file:///etc/passwd", "expected an http:// or https:// URL"),
        ("gopher://example.com/", "expected an http:// or https:// URL"),
        ("https:///x", "no host"),
        ("https://exa mple.com/", "whitespace"),
        ("https://127.1/x", "four decimal octets"),
        ("https://2130706433/x", "four decimal octets"),
        ("https://0x7f.0.0.1/x", "four decimal octets"),
        ("https://[::1/x", "port must be a number"),  # httpx reads ':1' as the port
        ("https://[zz::1]/x", "not an IPv6"),
        ("https://a_b.example.com/", "not a valid host"),
        ("https://ex%61mple.com/", "plain ASCII"),
    ],
)
def test_urls_are_parsed_completely(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        split_url(url)


def test_an_empty_port_is_the_default_port() -> None:
    """RFC 3986 allows ``host:`` (port = *DIGIT); httpx fetches the default port, so the
    check takes it too (the old hand-written splitter refused what httpx fetches)."""
    parts = split_url("https://hooks.example.com:/x")
    assert parts.port is None and parts.origin() == "https://hooks.example.com"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pa55word@prom.internal:9090/api", "http://***@prom.internal:9090/api"),
        ("https://prom.example.com/x?token=abc123", "https://prom.example.com/x?***"),
        (
            "https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/XXXXXXXXXXXXXXXXXXXXXXXX",
            "https://hooks.slack.com/services/***/***/***",
        ),
        ("https://h.example.com/a#frag", "https://h.example.com/a"),
        ("not a url", "<unparsable URL>"),
    ],
)
def test_redaction_hides_user_info_query_and_tokens(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("url", "insecure", "needle"),
    [
        ("https://hooks.slack.com/services/x", False, None),
        ("http://hooks.slack.com/services/x", False, "must use https"),
        ("https://127.0.0.1/x", False, "not public"),
        ("https://10.0.0.5/x", False, "not public"),
        ("https://localhost/x", False, "not public"),
        ("https://chat/x", False, "not public"),
        ("https://metadata.google.internal/x", False, "not public"),
        ("https://[::1]/x", False, "not public"),
        ("http://169.254.169.254/latest/meta-data", True, "link-local"),
        ("http://[fd00:ec2::254]/", True, "link-local"),
        ("http://mattermost.lab:8065/hooks/x", True, None),
        ("http://127.0.0.1:8080/x", True, None),
    ],
)
def test_webhook_address_rules(url: str, insecure: bool, needle: str | None) -> None:
    problem = webhook_problem(url, allow_insecure=insecure)
    if needle is None:
        assert problem is None
    else:
        assert problem is not None and needle in problem
        assert "/x" not in problem.replace("://", "")  # the path (the secret) is not shown


def test_expansion_only_for_gpuplan_names_and_env_allow() -> None:
    environ = {"AWS_SECRET_ACCESS_KEY": "s3cr3t", "GPUPLAN_HOOK": "https://h.example.com/a",
               "TEAM_HOOK": "https://h.example.com/b"}  # fmt: skip
    leak = BASE + "notify: {webhook_url: 'https://h.example.com/${AWS_SECRET_ACCESS_KEY}'}\n"
    with pytest.raises(InputError) as caught:
        parse_policy(leak, "p.yaml", environ=environ)
    assert "may not be expanded here" in str(caught.value) and "s3cr3t" not in str(caught.value)
    assert "p.yaml:3:" in str(caught.value)
    ok = parse_policy(
        BASE + "notify: {webhook_url: '${GPUPLAN_HOOK}'}\n", "p.yaml", environ=environ
    )
    assert ok.notify.webhook_url == "https://h.example.com/a"
    listed = BASE + "env_allow: [TEAM_HOOK]\nnotify: {webhook_url: '${TEAM_HOOK}'}\n"
    assert parse_policy(listed, "p.yaml", environ=environ).notify.webhook_url.endswith("/b")
    elsewhere = BASE + "scope: {aws: {regions: ['${GPUPLAN_HOOK}']}}\n"
    with pytest.raises(InputError, match="is not a cloud region"):
        parse_policy(elsewhere, "p.yaml", environ=environ)  # no expansion outside URL keys


def test_a_secret_in_the_host_is_refused_without_printing_it() -> None:
    environ = {"GPUPLAN_TOKEN": "tok-123-secret"}
    text = BASE + "notify: {webhook_url: 'http://${GPUPLAN_TOKEN}.example.com/x'}\n"
    with pytest.raises(InputError) as caught:
        parse_policy(text, "p.yaml", environ=environ)
    assert "not part of its host" in str(caught.value)
    assert "tok-123" not in str(caught.value)


def test_policy_show_redacts_every_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_PROM_PASSWORD", "pr0m-pa55")
    monkeypatch.setenv("GPUPLAN_HOOK", "https://hooks.example.com/services/T000/B000/zzzzzzzz")
    path = tmp_path / "p.yaml"
    path.write_text(
        BASE + "scope: {azure: {subscriptions: ['00000000-0000-0000-0000-000000000000'], "
        "arm_endpoint: 'https://arm.example.com/?sig=abcdef'}}\n"
        "idle: {allow_data_loss: false, metrics: {prometheus: {url: 'http://gp:${GPUPLAN_PROM_PASSWORD}@prom:9090'}}}\n"
        "notify: {webhook_url: '${GPUPLAN_HOOK}'}\n",
        encoding="utf-8",
    )
    for argv in (["policy", "show", str(path)], ["policy", "show", "--json", str(path)]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        for secret in ("pr0m-pa55", "T000", "zzzzzzzz", "abcdef", "gp:"):
            assert secret not in out
    assert main(["policy", "show", "--json", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["idle"]["metrics"]["prometheus"]["url"] == "http://***@prom:9090"
    assert data["notify"]["webhook_url"] == "https://hooks.example.com/..."


def test_webhook_port_99999_fails_policy_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(BASE + "notify: {webhook_url: 'https://hooks.example.com:99999/x'}\n")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "p.yaml:3:" in err and "notify.webhook_url" in err and "99999" in err


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("idle: {max_actions_per_run: %s}", "9" * 5000, "longer than 4096"),
        ("idle: {max_actions_per_run: %s}", "9" * 400, "at most 100,000"),
        ("idle: {threshold_percent: %s}", "1.0e+400", "finite"),
        ("idle: {threshold_percent: %s}", ".nan", "finite"),
        ("budget: {monthly_usd: %s}", ".inf", "finite"),
        ("budget: {monthly_usd: %s}", "2026-13-45", "not a valid value"),
        ("budget: {alert_at_percent: [%s]}", "9" * 300, "sensible size"),
    ],
)
def test_numbers_finite_and_in_range_with_place(field: str, value: str, needle: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_policy(BASE + field % value + "\n", "p.yaml")
    text = str(caught.value)
    assert text.startswith("p.yaml:3:") and needle in text and len(text) < 300


@pytest.mark.parametrize(
    ("section", "line"),
    [
        ("scope: {gcp: {projects: [p], compute_endpoint: 'http://169.254.169.254/x'}}", 3),
        (
            "scope: {azure: {subscriptions: ['00000000-0000-0000-0000-000000000000'], "
            "arm_endpoint: 'https://[fe80::1]/'}}",
            3,
        ),
        ("idle: {metrics: {prometheus: {url: 'http://u:p@169.254.169.254:9090'}}}", 3),
        ("bill: {bigquery_endpoint: 'https://u:p@169.254.169.254/bigquery'}", 3),
        ("bill:\n  team_label: team\n  bigquery_endpoint: 'https://[fe80::1]/'", 5),
    ],
)
def test_no_policy_url_points_at_the_metadata_service(section: str, line: int) -> None:
    with pytest.raises(InputError) as caught:
        parse_policy(BASE + section + "\n", "p.yaml")
    text = str(caught.value)
    assert text.startswith(f"p.yaml:{line}:") and "link-local" in text and "u:p" not in text
