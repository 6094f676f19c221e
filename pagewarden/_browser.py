"""Finding and launching Chromium the way pagewarden's tests, demo and `launch` do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

__all__ = [
    "BROWSERS",
    "CHROMIUM_ARGS",
    "HEADLESS_SHELLS",
    "WEBRTC_NO_UDP",
    "chromium_launch_options",
    "find_chromium",
]

#: Flags for a quiet headless Chromium: no sandbox (containers), no background traffic.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)

#: WebRTC sends no UDP (no host or server-reflexive candidates, no STUN/TURN datagrams, no
#: connectivity checks): only TCP, through the browser's proxy when it has one. `launch` always
#: passes them: without the network layer nothing would judge a datagram. Two spellings: the
#: full browser reads ``--webrtc-ip-handling-policy`` (a preference) and ignores the other;
#: the headless shell has no such preference and reads only ``--force-webrtc-ip-handling-policy``
#: (with the first alone it sends STUN datagrams: tests/interceptors/test_webrtc.py).
WEBRTC_NO_UDP: tuple[str, ...] = (
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)


#: Chromium's headless shell (Debian's ``chromium-headless-shell``): the same engine without the
#: desktop browser around it. Playwright runs it for every headless launch of its own builds; a
#: page in it costs about a third of the CPU of a page in the full browser's headless mode.
HEADLESS_SHELLS: tuple[str, ...] = ("/usr/bin/chromium-headless-shell", "chromium-headless-shell")

#: The full browser: needed for a window (``headless=False``), else the fallback.
BROWSERS: tuple[str, ...] = ("/usr/bin/chromium", "chromium", "chromium-browser")


def _first(names: tuple[str, ...]) -> str | None:
    for name in names:
        candidate = name if name.startswith("/") else shutil.which(name)
        if candidate and Path(candidate).exists():
            return candidate
    return None


def find_chromium(*, headless: bool = True) -> str | None:
    """A system Chromium: $PAGEWARDEN_CHROMIUM, else for a headless launch Debian's headless
    shell (``/usr/bin/chromium-headless-shell`` or on PATH), else ``/usr/bin/chromium`` or
    ``chromium`` on PATH.

    None means "use Playwright's own browser" (if it was installed).
    """
    env = os.environ.get("PAGEWARDEN_CHROMIUM")
    if env:
        if not Path(env).exists():
            raise FileNotFoundError(f"PAGEWARDEN_CHROMIUM={env} does not exist")
        return env
    return (_first(HEADLESS_SHELLS) if headless else None) or _first(BROWSERS)


def chromium_launch_options(
    *, headless: bool = True, host_map: dict[str, int] | None = None, extra_args: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Keyword arguments for `playwright.chromium.launch`.

    `host_map` maps host patterns (``*.test``) to a local port, so several origins can be
    served by one server on 127.0.0.1.
    """
    args = [*CHROMIUM_ARGS, *extra_args]
    if host_map:
        rules = ", ".join(f"MAP {host} 127.0.0.1:{port}" for host, port in host_map.items())
        args.append(f"--host-resolver-rules={rules}")
    options: dict[str, Any] = {"headless": headless, "args": args}
    executable = find_chromium(headless=headless)
    if executable:
        options["executable_path"] = executable
    return options
