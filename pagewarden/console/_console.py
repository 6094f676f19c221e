"""`Console`: the supervision web app, served on the agent's loop or on a thread of its own."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pagewarden.console._access import Access, check_binding, new_token
from pagewarden.console._hub import Hub
from pagewarden.trace import get_logger

__all__ = ["Console"]


class Console:
    """A local web app that watches guarded sessions, approves, pauses, stops and takes over.

    Serve it on the running event loop (``async with Console() as console`` or
    ``await console.start_async()``, for the async API) or on a background thread
    (``with Console() as console`` or ``console.start()``, for the sync API and the CLI).
    Attach guards with ``Guard(console=console)``; guards in other processes attach with
    ``Guard(console=console.url)``.

    Args:
        host: the address to listen on; loopback by default. Any other address lets other
            machines reach the console and needs TLS (`tls_cert` and `tls_key`) or
            `behind_proxy`; a `ValueError` says so otherwise.
        port: the port (0 picks a free one; read `port` after starting).
        token: the full-power token (random by default).
        read_only_token: the token of the read-only link (random by default).
        guard_token: the token of the guard link: guards may attach with it, and it grants
            nothing else (random by default).
        approval_timeout: seconds a person has to answer an ASK before it is denied.
        tls_cert: a PEM certificate chain to serve HTTPS with (with `tls_key`).
        tls_key: the PEM private key of `tls_cert`.
        behind_proxy: the operator's word that a reverse proxy in front of the console
            terminates TLS (nginx, a load balancer): the console may then listen beyond
            loopback without TLS of its own. Needs `public_url`.
        public_url: the address people and guards use (``https://console.example.com``):
            requests naming another host are refused, and `url` gives it. Needed behind a
            proxy and on a wildcard address (``0.0.0.0``).
        people: full-power tokens of named people (name -> token, at least 16 characters
            each): an approval answered with one is recorded as answered by that name
            (``"by": "alice"``); with the shared full token it is ``"console"``.
        user_header: behind a reverse proxy that authenticates people, the request header
            naming the user (``X-Forwarded-User``, ``Remote-User`` …): approvals answered
            through it are recorded as answered by that user. Only with `behind_proxy`.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        read_only_token: str | None = None,
        guard_token: str | None = None,
        approval_timeout: float = 120.0,
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        behind_proxy: bool = False,
        public_url: str | None = None,
        people: Mapping[str, str] | None = None,
        user_header: str | None = None,
    ) -> None:
        if approval_timeout <= 0:
            raise ValueError("approval_timeout must be positive")
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("TLS needs both a certificate (tls_cert) and its key (tls_key)")
        check_binding(host, tls=tls_cert is not None, behind_proxy=behind_proxy, public_url=public_url)
        self.host = host
        self.port = port
        self.tls = (Path(tls_cert), Path(tls_key)) if tls_cert is not None and tls_key is not None else None
        self.behind_proxy = behind_proxy
        self.public_url = public_url.rstrip("/") if public_url is not None else None
        self._full_token = token or new_token()
        self._view_token = read_only_token or new_token()
        self._guard_token = guard_token or new_token()
        self.access = Access(
            self._full_token,
            self._view_token,
            host,
            guard_token=self._guard_token,
            tls=self.tls is not None,
            public_url=self.public_url,
            behind_proxy=behind_proxy,
            people=people,
            user_header=user_header,
        )
        self.hub = Hub(approval_timeout=approval_timeout)
        self.log = get_logger(component="console")
        self._server: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- addresses ----------------------------------------------------------------------
    def _base(self) -> str:
        if self.public_url is not None:
            return self.public_url
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The console's address with the full-power token (keep it private)."""
        return f"{self._base()}/?token={self._full_token}"

    @property
    def read_only_url(self) -> str:
        """An address that shows the sessions but cannot approve or control them."""
        return f"{self._base()}/?token={self._view_token}"

    @property
    def guard_url(self) -> str:
        """An address for guards only (``Guard(console=console.guard_url)``): it attaches,
        and cannot read sessions, approve or control anything."""
        return f"{self._base()}/?token={self._guard_token}"

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server's TLS context (None without TLS); a clear error for unreadable files."""
        if self.tls is None:
            return None
        cert, key = self.tls
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"cannot load the TLS certificate {cert} with key {key}: {exc}") from None
        return context

    @property
    def running(self) -> bool:
        """Whether the console is serving."""
        return self._server is not None

    # -- serving on the current loop ------------------------------------------------------
    async def start_async(self) -> Console:
        """Serve on the running event loop (the agent's, for the async API)."""
        from pagewarden.console._server import listen

        if self._server is not None:
            raise RuntimeError("the console is already running")
        self.hub.loop = asyncio.get_running_loop()
        self._loop = self.hub.loop
        self._server = await listen(self)
        self.access.port = self.port
        if not self.access.loopback:
            self.log.warning(
                "console_not_loopback",
                host=self.host,
                tls=self.tls is not None,
                behind_proxy=self.behind_proxy,
                note="other machines can reach the console; the tokens guard it",
            )
        self.log.info("console_started", address=self._base(), listening=f"{self.host}:{self.port}")
        return self

    async def aclose(self) -> None:
        """Stop serving (on the loop it serves on)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.stop()
        self.hub.close()
        await asyncio.sleep(0)  # let the streams read their goodbye
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.close_all_connections(), 5)

    async def __aenter__(self) -> Console:
        return await self.start_async()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- serving on a thread --------------------------------------------------------------
    def start(self) -> Console:
        """Serve on a background thread with its own event loop (for the sync API)."""
        if self._thread is not None or self._server is not None:
            raise RuntimeError("the console is already running")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the starting thread
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.aclose())
                loop.close()

        self._thread = threading.Thread(target=run, name="pagewarden-console", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread = None
            raise failure[0]
        return self

    def close(self) -> None:
        """Stop serving (the thread started by `start`)."""
        thread, self._thread = self._thread, None
        if thread is None or self._loop is None:
            return
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._loop.stop)
        thread.join(10)

    def __enter__(self) -> Console:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def serve_forever(self, announce: Callable[[Console], None] | None = None) -> None:
        """Serve in the foreground until interrupted (the CLI); `announce` is called once serving."""

        async def main() -> None:
            await self.start_async()
            if announce is not None:
                announce(self)
            try:
                await asyncio.Event().wait()
            finally:
                await self.aclose()

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(main())

    def __repr__(self) -> str:  # never show a token
        return f"Console({self._base()}, running={self.running})"
