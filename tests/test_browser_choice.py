"""Which Chromium a launch uses: $PAGEWARDEN_CHROMIUM, else the headless shell for a headless
launch, else the full browser; and the browser the suite launches is the one chosen."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from pagewarden import _browser
from pagewarden._browser import chromium_launch_options, find_chromium


def _binary(path: Path) -> str:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def binaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.delenv("PAGEWARDEN_CHROMIUM", raising=False)
    shell = _binary(tmp_path / "chromium-headless-shell")
    browser = _binary(tmp_path / "chromium")
    monkeypatch.setattr(_browser, "HEADLESS_SHELLS", (shell,))
    monkeypatch.setattr(_browser, "BROWSERS", (str(tmp_path / "missing-browser"), browser))
    return {"shell": shell, "browser": browser}


def test_a_headless_launch_takes_the_headless_shell(binaries: dict[str, str]) -> None:
    assert find_chromium() == binaries["shell"]
    assert chromium_launch_options(headless=True)["executable_path"] == binaries["shell"]


def test_a_window_needs_the_full_browser(binaries: dict[str, str]) -> None:
    assert find_chromium(headless=False) == binaries["browser"]
    assert chromium_launch_options(headless=False)["executable_path"] == binaries["browser"]


def test_without_a_headless_shell_the_full_browser_runs_headless(
    binaries: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        _browser, "HEADLESS_SHELLS", (str(tmp_path / "no-shell"), "no-such-headless-shell-on-path")
    )
    assert find_chromium() == binaries["browser"]


def test_the_environment_chooses_over_both(
    binaries: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    chosen = _binary(tmp_path / "my-chrome")
    monkeypatch.setenv("PAGEWARDEN_CHROMIUM", chosen)
    assert find_chromium() == chosen
    assert find_chromium(headless=False) == chosen
    monkeypatch.setenv("PAGEWARDEN_CHROMIUM", str(tmp_path / "gone"))
    with pytest.raises(FileNotFoundError, match="PAGEWARDEN_CHROMIUM"):
        find_chromium()


async def test_the_chosen_binary_is_the_browser_that_runs() -> None:
    """The launch options start the binary find_chromium names (a real launch of what is installed;
    Debian's /usr/bin wrappers exec a binary of the same name under /usr/lib/chromium)."""
    if os.environ.get("PAGEWARDEN_CHROMIUM"):
        pytest.skip("PAGEWARDEN_CHROMIUM names the binary; its process may have another name")
    expected = find_chromium(headless=True)
    if expected is None:
        pytest.skip("no system Chromium: Playwright's own browser is used")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**chromium_launch_options(headless=True))
        try:
            session = await browser.new_browser_cdp_session()
            info = await session.send("SystemInfo.getProcessInfo")
            pids = [process["id"] for process in info["processInfo"] if process["type"] == "browser"]
            running = [Path(os.readlink(f"/proc/{pid}/exe")).name for pid in pids]
        finally:
            await browser.close()
    assert running == [Path(expected).name]
