"""The MCP server's browsers: the one Chromium a server's sessions share (`SharedBrowser`), and a
session's guarded browser context with its tabs and modal state (a JavaScript dialog or a file
chooser waiting for the model), started on first use (`BrowserSession`).

A session with its own context gets it from the shared browser: a fresh, isolated context
(``storage_state`` applied), wrapped by the session's guard, and, with the network layer, sent
through the session's own proxy (`pagewarden.proxy.session_proxy`: its token, its policies, its
refusals), as `pagewarden.demo` runs its agents. A persistent profile (``user_data_dir``) is one
context of a browser of its own (`pagewarden._launch.browser_context`, the wiring `launch`
uses): only one session can hold it. With the guard off (`ServerOptions.guard` False, for the
overhead benchmarks only) the pages are raw.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AsyncExitStack
from typing import Any

from pagewarden._browser import chromium_launch_options
from pagewarden._launch import (
    _driver_trusts_ca,
    _friendly,
    browser_context,
    browser_options,
    per_context_proxy_launch_options,
    proxied_context_options,
)
from pagewarden._userdir import config_dir
from pagewarden.guard import Guard
from pagewarden.integrations.mcp._logs import SessionLog
from pagewarden.integrations.mcp._options import ServerOptions

__all__ = ["BrowserSession", "ModalState", "SharedBrowser", "profile_dir"]

#: Without the network layer, the navigation gate judges requests through Playwright's routes,
#: which do not see a shared worker's requests (as `launch` does for a guarded browser).
_NO_SHARED_WORKERS = "--disable-blink-features=SharedWorker"


class SharedBrowser:
    """The Chromium of one server, launched on the first session's first call and shared by
    every session (each in a context of its own); closed with the server."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self._stack: AsyncExitStack | None = None
        self._browser: Any = None
        self._lock = asyncio.Lock()

    @property
    def proxied(self) -> bool:
        """Whether each session's context goes through a network layer of its own."""
        return self.options.proxy and self.options.guard

    @property
    def running(self) -> bool:
        """Whether the browser runs."""
        return self._browser is not None and self._browser.is_connected()

    async def _launch(self) -> Any:
        async with self._lock:
            if self.running:
                return self._browser
            await self.aclose()
            from playwright.async_api import Error, async_playwright

            options = self.options
            host_map = dict(options.host_map) or None
            if self.proxied:
                launch = per_context_proxy_launch_options(headless=options.headless)
            elif options.guard:
                launch = chromium_launch_options(
                    headless=options.headless, host_map=host_map, extra_args=(_NO_SHARED_WORKERS,)
                )
            else:
                launch = chromium_launch_options(headless=options.headless, host_map=host_map)
            if options.executable_path is not None:
                launch["executable_path"] = str(options.executable_path)
            if options.channel is not None:
                launch.pop("executable_path", None)
                launch["channel"] = options.channel
            stack = AsyncExitStack()
            try:
                # the contexts' API clients (page.request) go through their proxies: the driver
                # must trust the proxies' CA, and it reads its environment when it starts
                with _driver_trusts_ca(True if self.proxied else None):
                    playwright = await stack.enter_async_context(async_playwright())
                try:
                    browser = await playwright.chromium.launch(**launch)
                except Error as exc:
                    raise _friendly(exc) from exc
                stack.push_async_callback(browser.close)
            except BaseException:
                await stack.aclose()
                raise
            self._stack, self._browser = stack, browser
            return browser

    async def new_context(self, guard: Guard | None, stack: AsyncExitStack, options: dict[str, Any]) -> Any:
        """A new raw context for one session (`guard`, None with the guard off), its network
        layer started and checked first; `stack` closes both."""
        browser = await self._launch()
        if self.proxied and guard is not None:
            from pagewarden.proxy import session_proxy, verify_enforcing

            network = session_proxy(guard, host_map=dict(self.options.host_map) or None)
            await network.start_async()
            stack.callback(network.stop)
            await asyncio.to_thread(verify_enforcing, network)
            kwargs = proxied_context_options(guard, network, options)
        elif guard is not None:
            kwargs = browser_options(
                guard, host_map=dict(self.options.host_map) or None, context_options=options
            )[1]
        else:
            kwargs = dict(options)
        context = await browser.new_context(**kwargs)
        stack.push_async_callback(context.close)
        return context

    async def aclose(self) -> None:
        """Close the browser (every context still open in it)."""
        stack, self._stack, self._browser = self._stack, None, None
        if stack is not None:
            await stack.aclose()


def profile_dir(options: ServerOptions) -> Any:
    """The persistent profile `options` name (None: isolated contexts, in memory): the
    ``--user-data-dir``, or by default pagewarden's own ``<config dir>/mcp-profile``."""
    if options.isolated or options.storage_state is not None:
        return None
    if options.user_data_dir is not None:
        return options.user_data_dir
    from pagewarden._userdir import private_dir

    return private_dir(config_dir() / "mcp-profile")


class ModalState:
    """A dialog or file chooser that opened while an action ran; the model answers it next."""

    def __init__(self, kind: str, obj: Any, name: str, message: str = "") -> None:
        self.kind = kind  # "dialog" | "filechooser"
        self.obj = obj
        self.name = name  # "confirm dialog", "file chooser" …
        self.message = message  # the page's text (a dialog's message)


class BrowserSession:
    """The guarded browser context of one MCP session, its tabs and the current tab.

    `shared`: the server's browser, in which this session opens a context of its own; None for
    a persistent profile (a browser of its own, started here)."""

    def __init__(
        self, options: ServerOptions, guard: Guard | None, shared: SharedBrowser | None = None
    ) -> None:
        self.options = options
        self.guard = guard
        self.shared = shared
        self._stack: AsyncExitStack | None = None
        self.context: Any = None
        self.tabs: list[Any] = []
        self.current = 0
        self.modal: ModalState | None = None
        self._modal_event = asyncio.Event()
        self._background: set[asyncio.Future[Any]] = set()
        self._start_lock = asyncio.Lock()
        #: the console messages and requests of this session's context, with their verdicts
        self.log = SessionLog(guard)

    # -- life cycle --------------------------------------------------------------------
    @property
    def started(self) -> bool:
        """Whether the browser runs."""
        return self.context is not None

    @property
    def persistent(self) -> bool:
        """Whether this session's context is a persistent profile (a browser of its own)."""
        return self.shared is None

    async def _open(self, stack: AsyncExitStack, context_options: dict[str, Any]) -> Any:
        options = self.options
        if self.shared is not None:
            return await self.shared.new_context(self.guard, stack, context_options)
        guard = self.guard if self.guard is not None else Guard(baseline=False)
        if self.guard is None:
            stack.callback(guard.close)
        return await stack.enter_async_context(
            browser_context(
                guard,
                headless=options.headless,
                host_map=dict(options.host_map) or None,
                context_options=context_options,
                proxy=options.proxy and self.guard is not None,
                user_data_dir=profile_dir(options),
                executable_path=options.executable_path,
                channel=options.channel,
            )
        )

    async def start(self) -> None:
        """Open this session's context (and its network layer) unless it is open."""
        async with self._start_lock:
            if self.started:
                return
            options = self.options
            context_options: dict[str, Any] = {}
            if options.viewport is not None:
                context_options["viewport"] = {"width": options.viewport[0], "height": options.viewport[1]}
            if options.storage_state is not None:
                context_options["storage_state"] = str(options.storage_state)
            stack = AsyncExitStack()
            try:
                raw = await self._open(stack, context_options)
                raw.set_default_timeout(options.action_timeout_ms)
                raw.set_default_navigation_timeout(options.navigation_timeout_ms)
                first = raw.pages[0] if raw.pages else await raw.new_page()
                self.context = self.guard.wrap(raw) if self.guard is not None else raw
                self._stack = stack
                self.log.attach(raw)
            except BaseException:
                await stack.aclose()
                raise
            self.tabs = []
            self.current = 0
            self.context.on("page", self._adopt)
            self._adopt(self._wrapped(first))

    def _wrapped(self, page: Any) -> Any:
        return self.guard.wrap(page) if self.guard is not None else page

    def _adopt(self, page: Any) -> None:
        """A new tab (opened by the model, a popup, a link with target=_blank) joins the list."""
        if any(_same(page, tab) for tab in self.tabs):
            return
        self.tabs.append(page)
        page.on("dialog", self._on_dialog)
        page.on("filechooser", self._on_chooser)
        page.on("close", self._on_close)

    def _on_close(self, page: Any) -> None:
        self.tabs = [tab for tab in self.tabs if not _same(tab, page)]
        self.current = min(self.current, max(len(self.tabs) - 1, 0))

    def _on_dialog(self, dialog: Any) -> None:
        message = str(dialog.message or "")
        self.modal = ModalState("dialog", dialog, f"{dialog.type} dialog", message)
        self._modal_event.set()

    def _on_chooser(self, chooser: Any) -> None:
        self.modal = ModalState("filechooser", chooser, "file chooser")
        self._modal_event.set()

    @property
    def modal_opened(self) -> bool:
        """Whether a dialog or file chooser opened during the last action and waits for the model."""
        return self._modal_event.is_set() and self.modal is not None

    async def wait_modal(self, timeout: float) -> ModalState | None:
        """The modal state, waiting up to `timeout` s for one an action opened (a file chooser
        is announced after the click that opens it returns)."""
        if self.modal is None and self.started:
            try:
                await asyncio.wait_for(self._modal_event.wait(), timeout)
            except TimeoutError:
                return None
        return self.modal

    async def close(self) -> None:
        """Close this session's context (and its network layer; a persistent profile's browser);
        the next tool call opens a new one."""
        stack, self._stack = self._stack, None
        self.context = None
        self.tabs = []
        self.modal = None
        self.log.detach_context()
        for task in list(self._background):
            task.cancel()
        if stack is not None:
            await stack.aclose()

    # -- tabs --------------------------------------------------------------------------
    async def page(self) -> Any:
        """The current tab (the context opens when it is not open; a new tab when none is open)."""
        await self.start()
        if not self.tabs:
            page = await self.context.new_page()
            self._adopt(page)
        self.current = min(self.current, len(self.tabs) - 1)
        return self.tabs[self.current]

    async def new_tab(self) -> Any:
        """Open a tab (a guarded action) and make it current."""
        await self.start()
        page = await self.context.new_page()
        self._adopt(page)
        self.current = next(i for i, tab in enumerate(self.tabs) if _same(tab, page))
        return page

    # -- actions -----------------------------------------------------------------------
    async def run(self, action: Any) -> bool:
        """Await `action` (a coroutine), unless a dialog or file chooser opens first: then the
        action goes on in the background (a dialog holds it until the model answers) and the
        result is False. True: the action finished (its exception, if any, is raised)."""
        self._modal_event.clear()
        task = asyncio.ensure_future(action)
        waiter = asyncio.ensure_future(self._modal_event.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if task.done():
            task.result()
            return True
        if self.modal is not None and self.modal.kind == "filechooser":
            # a chooser does not hold the click: let it finish
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            if task.done():
                task.result()
                return True
        self._background.add(task)
        task.add_done_callback(_settled(self._background))
        return False


def _same(a: Any, b: Any) -> bool:
    unwrap = getattr(a, "unwrap", None)
    a = unwrap() if callable(unwrap) else a
    unwrap = getattr(b, "unwrap", None)
    b = unwrap() if callable(unwrap) else b
    return a is b


def _settled(pending: set[asyncio.Future[Any]]) -> Any:
    def done(task: asyncio.Future[Any]) -> None:
        pending.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: an action answered through a dialog reports nothing more

    return done
