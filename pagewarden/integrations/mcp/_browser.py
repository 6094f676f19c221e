"""The MCP server's browser: one guarded Chromium context, its tabs, and the modal state
(a JavaScript dialog or a file chooser waiting for the model), started on first use.

The context comes from `pagewarden._launch.browser_context` (the wiring `launch` uses:
the navigation gate, or the network layer with its session token and CA) and is wrapped by
the guard, so every tab — new ones and popups included — is a guarded page. With the guard
off (`ServerOptions.guard` False, for the overhead benchmark only) the pages are raw.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AsyncExitStack
from typing import Any

from pagewarden._launch import browser_context
from pagewarden._userdir import config_dir
from pagewarden.guard import Guard
from pagewarden.integrations.mcp._logs import SessionLog
from pagewarden.integrations.mcp._options import ServerOptions

__all__ = ["BrowserSession", "ModalState"]


class ModalState:
    """A dialog or file chooser that opened while an action ran; the model answers it next."""

    def __init__(self, kind: str, obj: Any, name: str, message: str = "") -> None:
        self.kind = kind  # "dialog" | "filechooser"
        self.obj = obj
        self.name = name  # "confirm dialog", "file chooser" …
        self.message = message  # the page's text (a dialog's message)


class BrowserSession:
    """The guarded browser context of one MCP server, its tabs and the current tab."""

    def __init__(self, options: ServerOptions, guard: Guard | None) -> None:
        self.options = options
        self.guard = guard
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

    def _user_data_dir(self) -> Any:
        if self.options.isolated or self.options.storage_state is not None:
            return None
        if self.options.user_data_dir is not None:
            return self.options.user_data_dir
        from pagewarden._userdir import private_dir

        return private_dir(config_dir() / "mcp-profile")

    async def start(self) -> None:
        """Start Chromium (and the network layer) unless it runs."""
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
            guard = self.guard if self.guard is not None else Guard(baseline=False)
            try:
                raw = await stack.enter_async_context(
                    browser_context(
                        guard,
                        headless=options.headless,
                        host_map=dict(options.host_map) or None,
                        context_options=context_options,
                        proxy=options.proxy and self.guard is not None,
                        user_data_dir=self._user_data_dir(),
                        executable_path=options.executable_path,
                        channel=options.channel,
                    )
                )
                if self.guard is None:
                    stack.callback(guard.close)
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
        """Close the browser (and the network layer); the next tool call starts a new one."""
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
        """The current tab (the browser starts when it does not run; a new tab when none is open)."""
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
