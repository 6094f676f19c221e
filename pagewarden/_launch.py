"""`launch`: a guarded page in one call (Chromium, the guard, the trace recorder, and with
``proxy=True`` the network layer)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from pagewarden._browser import WEBRTC_NO_UDP, chromium_launch_options
from pagewarden.guard import Guard

__all__ = [
    "browser_context",
    "browser_options",
    "launch",
    "launch_sync",
    "per_context_proxy_launch_options",
    "proxied_context_options",
]

#: The browser-wide proxy of a browser whose contexts each have their own proxy (Playwright
#: needs one at launch for per-context proxies; nothing ever reaches it).
PER_CONTEXT_PROXY = "http://per-context.invalid:9"

_NO_BROWSER = (
    "no Chromium to launch: install Debian's chromium (apt-get install chromium), set "
    "PAGEWARDEN_CHROMIUM to a Chromium binary, or run `playwright install chromium`"
)


def _guard(
    guard: Guard | None, trace_dir: str | Path | None, guard_options: Mapping[str, Any], console: Any = None
) -> Guard:
    if guard is not None:
        if guard_options:
            raise TypeError("pass either a Guard or Guard options (record= included), not both")
        if console is not None:
            from pagewarden.console import attach

            attach(guard, console)
        return guard
    trace = Path(trace_dir) / "trace.jsonl" if trace_dir is not None else None
    if trace is not None and guard_options.get("record") is not None:
        raise TypeError("pass either trace_dir= or record= (a recorded session holds its own trace)")
    return Guard(trace=trace, console=console, **guard_options)


def _announce(console: Any) -> None:
    """Tell the person where the console of this run is (like Jupyter, on stderr)."""
    print(f"pagewarden console: {console.url}\n  read-only link: {console.read_only_url}", file=sys.stderr)


def _launch_options(
    headless: bool, host_map: dict[str, int] | None, args: tuple[str, ...], network: Any = None
) -> dict[str, Any]:
    if network is not None:
        from pagewarden.proxy import chromium_proxy_args

        # behind the proxy the proxy resolves names (it got the host map), so Chromium does not
        return chromium_launch_options(headless=headless, extra_args=(*chromium_proxy_args(network), *args))
    # WebRTC's datagrams go around the browser layer: none are sent (its TCP relays are judged
    # in the page: `pagewarden.interceptors`)
    return chromium_launch_options(headless=headless, host_map=host_map, extra_args=(*WEBRTC_NO_UDP, *args))


def _context_options(options: Mapping[str, Any] | None, active: Guard) -> dict[str, Any]:
    """The browser context's options; behind the proxy, its session token in every request
    (the tab ids of the per-tab grants ride on it; the session's own proxy port says which
    session a request is, `_through`). Service workers and shared workers are left on: the
    proxy judges their requests as the page's, and without it the navigation gate does (its
    routes see a service worker's requests; its Content-Security-Policy and its DevTools session
    a shared worker's, `pagewarden.interceptors`)."""
    result = dict(options or {})
    network = getattr(active, "network", None)
    if network is not None:
        from pagewarden.proxy import accept_language

        headers = {k: v for k, v in dict(result.get("extra_http_headers") or {}).items()
                   if k.lower() != "accept-language"}  # fmt: skip
        headers["Accept-Language"] = accept_language(network.token, result.get("locale"))
        network.locale = result.get("locale")  # each tab's own value keeps the languages
        result["extra_http_headers"] = headers
    return result


def _through(
    active: Guard, network: Any, options: dict[str, Any], *, persistent: bool = False
) -> dict[str, Any]:
    """`options` with the context's own proxy set to the session's port of `network` (the
    started session proxy, if any): everything the context sends — the page's requests, CORS
    preflights, keepalive requests while it unloads, its workers' requests and scripts, and the
    context's API client (``page.request``, ``context.request``, which runs in Playwright's driver
    and knows no browser flag) — arrives there and is the session's, while the browser's own
    traffic goes to the proxy's main port (the ``--proxy-server`` flag) and is refused.

    A persistent profile (`persistent`) has one proxy setting for the browser's traffic and the
    context's: both go to the main port, where the session token, or else a document or worker
    named as the request's maker, tells the context's apart (``shares_main_port``)."""
    if network is not None:
        session = getattr(active, "network", None)
        own = getattr(session, "proxy_url", None)
        if persistent and session is not None:
            session.shares_main_port = True
        server = network.url if persistent or not own else own
        options["proxy"] = {"server": server, "bypass": "<-loopback>"}
    return options


@contextmanager
def _driver_trusts_ca(network: Any) -> Iterator[None]:
    """While Playwright's driver starts: ``NODE_EXTRA_CA_CERTS`` naming the proxy's CA
    certificate, so the context's API client (``page.request``), which goes through the
    session proxy, accepts the certificates the proxy signs for HTTPS sites (the proxy
    verifies the sites' own). Chromium trusts the CA by its SPKI pin, not this. Certificates
    the variable named already are kept (Node reads one file: both go into ``node-ca.pem``
    next to the CA)."""
    if network is None:
        yield
        return
    from pagewarden.proxy import CA_CERT, ensure_ca

    name = "NODE_EXTRA_CA_CERTS"
    before = os.environ.get(name)
    directory = ensure_ca()
    bundle = (directory / CA_CERT).read_text()
    if before:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            bundle = Path(before).read_text() + "\n" + bundle
    target = directory / "node-ca.pem"
    temporary = target.with_name(f".node-ca.{os.getpid()}.pem")
    temporary.write_text(bundle)
    temporary.replace(target)  # atomic: another launch may read it at the same time
    os.environ[name] = str(target)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def per_context_proxy_launch_options(headless: bool = True, args: tuple[str, ...] = ()) -> dict[str, Any]:
    """`playwright.chromium.launch` options for one browser whose contexts each go through
    their own session proxy (`proxied_context_options`): the flags of `launch(proxy=True)`
    that are not per proxy — loopback not bypassed, no QUIC, no WebRTC UDP, Chromium
    resolves no name itself (every name fails; the proxies resolve), the per-user CA pinned."""
    from pagewarden.proxy import spki_pin

    flags = (
        "--proxy-bypass-list=<-loopback>",
        "--disable-quic",
        *WEBRTC_NO_UDP,
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--ignore-certificate-errors-spki-list={spki_pin()}",
    )
    options = chromium_launch_options(headless=headless, extra_args=(*flags, *args))
    options["proxy"] = {"server": PER_CONTEXT_PROXY}
    return options


def proxied_context_options(
    active: Guard, server: Any, options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`browser.new_context` options sending the context through `server` (a started
    `session_proxy(active)`: the session's own port of it) with the session's token, loopback
    not bypassed (for a browser from `per_context_proxy_launch_options`)."""
    if getattr(active, "network", None) is None:
        raise ValueError("the guard has no network session: start session_proxy(guard) first")
    return _through(active, server, _context_options(options, active))


def browser_options(
    active: Guard,
    *,
    network: Any = None,
    headless: bool = True,
    host_map: dict[str, int] | None = None,
    browser_args: tuple[str, ...] = (),
    context_options: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``chromium.launch`` and ``browser.new_context`` keyword arguments `launch` uses for
    `active` (with `network`, its started session proxy, or None): for a framework that
    launches the browser itself (`pagewarden.integrations`)."""
    launch_options = _launch_options(headless, host_map, tuple(browser_args), network)
    return launch_options, _through(active, network, _context_options(context_options, active))


def _network(active: Guard, proxy: Any, host_map: dict[str, int] | None, proxy_options: Any) -> Any:
    """The session's proxy (not started), or None without ``proxy=``."""
    if not proxy:
        return None
    from pagewarden.proxy import session_proxy

    return session_proxy(active, host_map=host_map, options=proxy_options)


def _friendly(exc: Exception) -> Exception:
    if "Executable doesn't exist" in str(exc) or "executable" in str(exc).lower():
        return RuntimeError(_NO_BROWSER)
    return exc


@asynccontextmanager
async def browser_context(
    active: Guard,
    *,
    headless: bool = True,
    host_map: dict[str, int] | None = None,
    browser_args: tuple[str, ...] = (),
    context_options: Mapping[str, Any] | None = None,
    proxy: bool = False,
    proxy_options: Mapping[str, Any] | None = None,
    user_data_dir: str | Path | None = None,
    executable_path: str | Path | None = None,
    channel: str | None = None,
) -> AsyncIterator[Any]:
    """Chromium for `active`, wired as `launch` wires it, and yield its (raw, unwrapped)
    browser context; the browser and the network layer stop on exit, the guard stays open.

    With ``proxy=True`` the session's proxy is started and checked first (see `launch`).
    `user_data_dir`: a persistent profile (Playwright's ``launch_persistent_context``) instead
    of a fresh in-memory context; `executable_path` / `channel` choose another Chromium build.
    """
    from playwright.async_api import Error, async_playwright

    network = _network(active, proxy, host_map, proxy_options)
    try:
        if network is not None:
            from pagewarden.proxy import verify_enforcing

            await network.start_async()
            await asyncio.to_thread(verify_enforcing, network)
        async with AsyncExitStack() as stack:
            with _driver_trusts_ca(network):  # the driver's environment is read at its start
                playwright = await stack.enter_async_context(async_playwright())
            options, context_kwargs = browser_options(
                active, network=network, headless=headless, host_map=host_map,
                browser_args=browser_args, context_options=context_options,
            )  # fmt: skip
            if executable_path is not None:
                options["executable_path"] = str(executable_path)
            if channel is not None:
                options.pop("executable_path", None)
                options["channel"] = channel
            try:
                if user_data_dir is not None:
                    _through(active, network, context_kwargs, persistent=True)
                    context = await playwright.chromium.launch_persistent_context(
                        str(user_data_dir), **options, **context_kwargs
                    )
                    stack.push_async_callback(context.close)
                else:
                    browser = await playwright.chromium.launch(**options)
                    stack.push_async_callback(browser.close)
                    context = await browser.new_context(**context_kwargs)
            except Error as exc:
                raise _friendly(exc) from exc
            yield context
    finally:
        if network is not None:
            network.stop()


@asynccontextmanager
async def launch(
    guard: Guard | None = None,
    *,
    headless: bool = True,
    trace_dir: str | Path | None = None,
    host_map: dict[str, int] | None = None,
    browser_args: tuple[str, ...] = (),
    context_options: Mapping[str, Any] | None = None,
    console: Any = None,
    proxy: bool = False,
    proxy_options: Mapping[str, Any] | None = None,
    **guard_options: Any,
) -> AsyncIterator[Any]:
    """Start Chromium (a system Chromium if present, else Playwright's) and yield a guarded page.

    Either pass a `Guard`, or `Guard` keyword options (`policies=`, `goal=`, `mode=` …);
    `trace_dir` then receives ``trace.jsonl``; ``record=DIR`` (a Guard option) records the
    whole session into DIR instead (see `Guard`).

    `proxy=True` starts the network layer first (`pagewarden.proxy`: mitmproxy on a free
    127.0.0.1 port enforcing the guard's policies; `proxy_options` sets its options, e.g.
    ``{"pagewarden_strict": True, "pagewarden_allow_hosts": [...]}``), checks that it refuses
    what it must, and only then starts Chromium with every request (loopback included, no
    QUIC) going through it — the context's API client (``page.request``) too; its refusals
    are ``network`` events of the guard. `host_map` then goes to the proxy, which resolves
    names for the browser.

    `console`: ``True`` serves a supervision console on this event loop for the run (its URL
    is printed on stderr), or pass a running `pagewarden.console.Console` or a console's URL.
    """
    own_console = None
    if console is True:
        from pagewarden.console import Console

        console = own_console = await Console().start_async()
        _announce(own_console)
    active = _guard(guard, trace_dir, guard_options, console)
    try:
        async with browser_context(
            active, headless=headless, host_map=host_map, browser_args=browser_args,
            context_options=context_options, proxy=proxy, proxy_options=proxy_options,
        ) as context:  # fmt: skip
            yield active.wrap(await context.new_page())
    finally:
        active.close()
        if own_console is not None:
            await own_console.aclose()


@contextmanager
def launch_sync(
    guard: Guard | None = None,
    *,
    headless: bool = True,
    trace_dir: str | Path | None = None,
    host_map: dict[str, int] | None = None,
    browser_args: tuple[str, ...] = (),
    context_options: Mapping[str, Any] | None = None,
    console: Any = None,
    proxy: bool = False,
    proxy_options: Mapping[str, Any] | None = None,
    **guard_options: Any,
) -> Iterator[Any]:
    """`launch` for Playwright's sync API (exported as `pagewarden.sync_api.launch`); with
    ``console=True`` the console runs on a background thread, and with ``proxy=True`` the
    proxy runs on its own thread as under the async API."""
    from playwright.sync_api import Error, sync_playwright

    own_console = None
    if console is True:
        from pagewarden.console import Console

        console = own_console = Console().start()
        _announce(own_console)
    active = _guard(guard, trace_dir, guard_options, console)
    network = _network(active, proxy, host_map, proxy_options)
    try:
        if network is not None:
            from pagewarden.proxy import verify_enforcing

            network.start()
            verify_enforcing(network)
        with ExitStack() as stack:
            with _driver_trusts_ca(network):  # the driver's environment is read at its start
                playwright = stack.enter_context(sync_playwright())
            try:
                options = _launch_options(headless, host_map, tuple(browser_args), network)
                browser = playwright.chromium.launch(**options)
            except Error as exc:
                raise _friendly(exc) from exc
            try:
                options = _through(active, network, _context_options(context_options, active))
                context = browser.new_context(**options)
                yield active.wrap(context.new_page())
            finally:
                browser.close()
    finally:
        if network is not None:
            network.stop()
        active.close()
        if own_console is not None:
            own_console.close()
