"""`ProxyServer`: mitmproxy run in-process, on a thread with its own event loop.

The master is a minimal `mitmproxy.master.Master` (mitmproxy's proxy server, layer
selection and TLS addons, then pagewarden's addons), listening on 127.0.0.1 on a fresh
port for each server (mitmproxy does not free its listen port on an in-process shutdown).
`start()` returns once the proxy accepts connections, or raises `ProxyError`.

Its own thread and loop keep the proxy independent of the agent's: under Playwright's sync
API the agent's thread is blocked in Playwright calls while the browser's requests must be
answered, and under the async API a slow addon must not stall the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["ProxyError", "ProxyServer", "free_port", "listen_port_of"]

_log = logging.getLogger("pagewarden.proxy")


class _PerThreadContext(types.ModuleType):
    """`mitmproxy.ctx` with its ``master``, ``options`` and ``log`` per thread.

    mitmproxy keeps them as module globals, which a master sets when it is made; its addons read
    them while they are configured, and its proxy server hands every new connection to
    ``ctx.master`` with ``ctx.options``. With two proxies in one process (two agents'
    ``launch(proxy=True)``), the last master made would take every connection of both, judged by
    its own guard's policies. Each `ProxyServer` makes and runs its master on a thread of its
    own, so per thread each proxy sees its own; a thread that made none sees the last one set."""

    _local = threading.local()

    def _get(self, name: str) -> Any:
        try:
            return getattr(self._local, name)
        except AttributeError:
            try:
                return vars(self)[name]
            except KeyError:
                raise AttributeError(name) from None

    def _set(self, name: str, value: Any) -> None:
        setattr(self._local, name, value)
        vars(self)[name] = value

    master = property(lambda self: self._get("master"), lambda self, v: self._set("master", v))
    options = property(lambda self: self._get("options"), lambda self, v: self._set("options", v))
    log = property(lambda self: self._get("log"), lambda self, v: self._set("log", v))


def _context_per_thread() -> None:
    """Give `mitmproxy.ctx` its per-thread values (once per process; idempotent)."""
    import mitmproxy.ctx

    if not isinstance(mitmproxy.ctx, _PerThreadContext):
        mitmproxy.ctx.__class__ = _PerThreadContext


class ProxyError(RuntimeError):
    """The proxy could not start, or is not enforcing."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def listen_port_of(flow: Any) -> int | None:
    """The proxy's own port `flow`'s client connected to (None when unknown)."""
    try:
        return int(flow.client_conn.sockname[1])
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the connection handlers still open (browsers keep connections alive)."""
    loop.set_exception_handler(lambda _loop, _context: None)  # the cancellations themselves
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


class ProxyServer:
    """An in-process mitmproxy with pagewarden's addons.

    Args:
        addons: mitmproxy addons (pagewarden's `EgressPolicy`, `Recorder` …), run in order.
        host: listen address (127.0.0.1 unless told otherwise).
        port: listen port; 0 (default) picks a free one.
        options: mitmproxy options, applied after the addons are loaded (so the addons' own
            options may be set here).
        confdir: where mitmproxy keeps its CA (default: pagewarden's per-user CA directory).
        extra_ports: more listen ports on `host` (free ones, like `port`), each a regular proxy
            of its own: an addon tells them apart by the port a flow came in on
            (`listen_port_of`), which the client chose, not anything it sent. The session proxy
            gives its browser context one (`pagewarden.proxy.session_proxy`).
    """

    def __init__(
        self,
        addons: Iterable[Any] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        options: Mapping[str, Any] | None = None,
        confdir: str | Path | None = None,
        extra_ports: Iterable[int] = (),
    ) -> None:
        self.addons = list(addons)
        self.host = host
        self.port = port or free_port(host)
        self.extra_ports = tuple(extra_ports)
        self.extra_options = dict(options or {})
        self.confdir = Path(confdir) if confdir is not None else None
        self.master: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stopped = False
        self._confdir: Path | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> ProxyServer:
        """Start the proxy thread and wait until the proxy listens. The CA is created first
        when missing (`pagewarden.proxy.CAError` when it cannot be)."""
        if self._thread is not None:
            raise ProxyError("this ProxyServer was started already (use a new one: fresh port)")
        from pagewarden.proxy._ca import ensure_ca

        self._confdir = ensure_ca(self.confdir)  # on a first run it is made here, once
        self._thread = threading.Thread(target=self._run, name=f"pagewarden-proxy-{self.port}", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise ProxyError(f"the proxy did not listen on {self.host}:{self.port} within {timeout:.0f} s")
        if self._error is not None:
            error = self._error
            raise ProxyError(f"the proxy failed to start: {type(error).__name__}: {error}") from error
        return self

    async def start_async(self, timeout: float = 30.0) -> ProxyServer:
        """`start` without blocking the caller's event loop."""
        return await asyncio.to_thread(self.start, timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the proxy down and wait for its thread (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        if self.master is not None and self.loop is not None and not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.master.shutdown()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    async def stop_async(self, timeout: float = 10.0) -> None:
        """`stop` without blocking the caller's event loop."""
        await asyncio.to_thread(self.stop, timeout)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> ProxyServer:
        return await self.start_async()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_async()

    # -- state ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://host:port``: what a browser's proxy setting points at."""
        return self.url_of(self.port)

    def url_of(self, port: int) -> str:
        """``http://host:port`` for one of the proxy's listen ports."""
        return f"http://{self.host}:{port}"

    @property
    def running(self) -> bool:
        """Whether the proxy thread is alive and listening."""
        return bool(self._ready.is_set() and self._error is None and self._thread and self._thread.is_alive())

    def addon(self, kind: type) -> Any:
        """The first addon of type `kind`, or None."""
        return next((a for a in self.addons if isinstance(a, kind)), None)

    def call(self, fn: Any, *args: Any) -> None:
        """Run `fn(*args)` on the proxy's loop (thread-safe; for state addons read in hooks)."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(fn, *args)

    # -- the thread -------------------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            if not self._ready.is_set():
                self._error = exc
            else:
                _log.warning("proxy stopped with an error: %s: %s", type(exc).__name__, exc)
        finally:
            self._ready.set()
            try:
                _cancel_pending(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def _main(self) -> None:
        from mitmproxy import options
        from mitmproxy.addons import core, disable_h2c, next_layer, proxyserver, tlsconfig
        from mitmproxy.master import Master

        _context_per_thread()
        opts = options.Options()
        master = Master(opts, event_loop=asyncio.get_running_loop())
        master.addons.add(
            core.Core(),
            proxyserver.Proxyserver(),
            next_layer.NextLayer(),
            tlsconfig.TlsConfig(),
            disable_h2c.DisableH2C(),
            *self.addons,
        )
        # Options of the addons exist only now that they are loaded.
        values: dict[str, Any] = {
            "listen_host": self.host,
            "listen_port": self.port,
            "connection_strategy": "lazy",
            "confdir": str(self._confdir),
            "http3": False,
        }
        if self.extra_ports:
            values["mode"] = ["regular", *(f"regular@{port}" for port in self.extra_ports)]
        values.update(self.extra_options)
        opts.update(**values)
        self.master = master
        runner = asyncio.ensure_future(master.run())
        server = master.addons.get("proxyserver")
        listening = 1 + len(self.extra_ports)
        while not runner.done():
            if len(server.listen_addrs()) >= listening:
                self._ready.set()
                break
            await asyncio.sleep(0.01)
        await runner
        if not self._ready.is_set():
            raise ProxyError(f"the proxy stopped before listening on {self.host}:{self.port}")
