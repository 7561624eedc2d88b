"""``scope.kubernetes`` is checked like the clouds' sections: file, line, field, what was
expected, exit 2, nothing done; a good section passes ``policy check``."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.cli.main import main

HEAD = "version: 1\nname: k\nidle:\n  allow_data_loss: false\nscope:\n  kubernetes:\n"


@pytest.mark.parametrize(
    ("body", "line", "expected"),
    [
        (
            "    namespaces: [Bad_NS]\n",
            "p.yaml:7:18: scope.kubernetes.namespaces[0]",
            "is not a namespace name",
        ),
        ("    page_size: 0\n", "p.yaml:7:16: scope.kubernetes.page_size", "greater than or equal"),
        (
            "    contexts: [a]\n    in_cluster: true\n",
            "p.yaml:7:5: scope.kubernetes",
            "in_cluster uses the service account",
        ),
        ("    bogus: 1\n", "p.yaml:7:5: scope.kubernetes.bogus", "unknown key"),
        (
            "    match_labels: {'bad key!': x}\n",
            "scope.kubernetes.match_labels",
            "label or annotation key",
        ),
        ("    opt_out: 7\n", "p.yaml:7:14: scope.kubernetes.opt_out", "expected a label"),
    ],
)
def test_a_bad_section_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, line: str, expected: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert line in err and expected in err and "Traceback" not in err
    assert main(["fleet", "--policy", str(path)]) == 2  # every command refuses it


def test_a_good_section_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        HEAD + "    contexts: [prod-eu]\n    exclude_namespaces: [sandbox]\n"
        "    match_labels: {team: research}\n    metrics_labels: {cluster: prod-eu}\n",
        encoding="utf-8",
    )
    assert main(["policy", "check", str(path)]) == 0
    assert "ok" in capsys.readouterr().out


def test_a_missing_kubeconfig_is_bad_input_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + f"    kubeconfig: {tmp_path / 'none'}\n", encoding="utf-8")
    code = main(["fleet", "--policy", str(path)])
    err = capsys.readouterr().err
    # the policy names a file that is not there: bad input, one line, exit 2 (issue 35)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert f"scope.kubernetes.kubeconfig: {tmp_path / 'none'}: cannot be read" in err
