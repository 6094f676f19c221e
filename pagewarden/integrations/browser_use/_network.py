"""browser-use's browser behind pagewarden's network layer (`pagewarden proxy`).

browser-use launches Chromium itself and drives it over CDP. `browser_profile` gives it
pagewarden's Chromium and flags; with a started proxy (`network_layer`) all of the browser's
traffic (loopback included, no QUIC, no WebRTC UDP, names resolved by the proxy only, its CA
pinned) goes through the proxy, which enforces the guard's egress rules and exfiltration filter
on whatever the page or the agent sends.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from browser_use import BrowserProfile

from pagewarden._browser import chromium_launch_options
from pagewarden.guard import Guard

__all__ = ["browser_profile", "network_layer"]

#: browser-use makes a new ``/tmp/browser-use-downloads-*`` folder for every profile made
#: without ``downloads_path`` (one at import, for its default profile) and never removes it.
_DEFAULT_DOWNLOADS = "browser-use-downloads-"
_made_by_browser_use: set[Path] = set()


def _forget_when_empty(path: Any) -> None:
    """Remove browser-use's own downloads folder `path` at exit if nothing was downloaded."""
    if path is not None and Path(path).name.startswith(_DEFAULT_DOWNLOADS):
        _made_by_browser_use.add(Path(path))


@atexit.register
def _remove_empty_downloads() -> None:
    for path in _made_by_browser_use:
        with contextlib.suppress(OSError):
            path.rmdir()  # only an empty folder: a downloaded file keeps it


with contextlib.suppress(Exception):  # browser-use's module layout may change: then nothing to forget
    from browser_use.browser.session import DEFAULT_BROWSER_PROFILE

    _forget_when_empty(DEFAULT_BROWSER_PROFILE.downloads_path)


@contextmanager
def network_layer(
    guard: Guard, *, host_map: Mapping[str, int] | None = None, options: Mapping[str, Any] | None = None
) -> Iterator[Any]:
    """The network layer for `guard` (`pagewarden.proxy.standalone_proxy`, what
    ``pagewarden proxy`` runs), started and checked to refuse what it must; its refusals are
    ``network`` events of `guard`. Stopped on leaving.

    browser-use sets the root logger to INFO, where mitmproxy's loggers write every client
    connection and every name the browser's own background requests could not resolve: the
    ``mitmproxy`` logger is set to WARNING here unless a level was given to it already."""
    from pagewarden.proxy import standalone_proxy, verify_enforcing

    _quiet_mitmproxy()

    def refused(refusal: Any) -> None:
        data = refusal.to_dict()
        data.pop("tab", None)
        guard.emit("network", data)
        guard.log.info(
            "network_refused", action=data.get("action"), host=data.get("host"), rule=data.get("rule")
        )

    server = standalone_proxy(guard, host_map=host_map, options=options, on_refusal=refused)
    server.start()
    try:
        verify_enforcing(server)
        yield server
    finally:
        server.stop()


def _quiet_mitmproxy() -> None:
    """mitmproxy's loggers at WARNING (its connection log and DNS errors are INFO), unless the
    application set a level on the ``mitmproxy`` logger itself."""
    logger = logging.getLogger("mitmproxy")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def browser_profile(
    *, network: Any = None, host_map: dict[str, int] | None = None, headless: bool = True, **kwargs: Any
) -> BrowserProfile:
    """A browser-use `BrowserProfile` with pagewarden's Chromium (a system Chromium if found)
    and flags; with `network` (from `network_layer`) every request goes through it, without,
    `host_map` maps made-up hosts to local ports. Other keywords go to `BrowserProfile`.
    Without ``downloads_path``, browser-use's own new ``/tmp/browser-use-downloads-*`` folder is
    removed when the process exits if nothing was downloaded into it."""
    if network is not None:
        from pagewarden.proxy import chromium_proxy_args

        options = chromium_launch_options(headless=headless, extra_args=chromium_proxy_args(network))
    else:
        options = chromium_launch_options(headless=headless, host_map=host_map)
    args = [*options["args"], *kwargs.pop("args", [])]
    settings: dict[str, Any] = {"headless": headless, "args": args, "chromium_sandbox": False,
                                "enable_default_extensions": False}  # fmt: skip
    if options.get("executable_path"):
        settings["executable_path"] = options["executable_path"]
    settings.update(kwargs)
    profile = BrowserProfile(**settings)
    if "downloads_path" not in kwargs:
        _forget_when_empty(profile.downloads_path)
    return profile
