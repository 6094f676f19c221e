"""Finding and launching Chromium the way pagewarden's tests, demo and `launch` do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM_ARGS", "WEBRTC_NO_UDP", "chromium_launch_options", "find_chromium"]

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
#: passes it: without the network layer nothing would judge a datagram.
WEBRTC_NO_UDP = "--webrtc-ip-handling-policy=disable_non_proxied_udp"


def find_chromium() -> str | None:
    """A system Chromium: $PAGEWARDEN_CHROMIUM, /usr/bin/chromium or `chromium` on PATH.

    None means "use Playwright's own browser" (if it was installed).
    """
    env = os.environ.get("PAGEWARDEN_CHROMIUM")
    if env:
        if not Path(env).exists():
            raise FileNotFoundError(f"PAGEWARDEN_CHROMIUM={env} does not exist")
        return env
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


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
    executable = find_chromium()
    if executable:
        options["executable_path"] = executable
    return options
