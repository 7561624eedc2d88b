"""Crash reports go to a private per-user folder, a new file each time, never through a
link another user planted (they used to go to one fixed name in the shared temp folder)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpuplan.tui.crash import crash_dir, save_crash


def test_reports_go_to_the_users_state_folder_private_and_new_each_time(
    _private_state_dirs: Path,
) -> None:
    assert crash_dir() == _private_state_dirs / "gpuplan" / "crashes"
    first, second = save_crash("one"), save_crash("two")
    assert first != second and first.parent == second.parent == crash_dir()
    assert first.read_text(encoding="utf-8") == "one"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert stat.S_IMODE(crash_dir().stat().st_mode) == 0o700


def test_a_folder_others_may_write_is_made_private(tmp_path: Path) -> None:
    folder = tmp_path / "crashes"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    save_crash("x", folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_link_in_place_of_the_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "crashes").symlink_to(elsewhere)
    with pytest.raises(OSError, match="not a folder"):
        save_crash("x", tmp_path / "crashes")
    assert list(elsewhere.iterdir()) == []
