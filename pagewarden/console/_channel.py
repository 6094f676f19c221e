"""Channels between a guard's `ConsoleLink` and a console: in-process, or HTTP to another process.

The HTTP channel is the client side of the console's local API (docs/reference/events.md):
it registers the session, posts events in batches, puts the newest frame, and long-polls
for commands, on two daemon threads of its own, so a sink call never blocks the agent.
When the console cannot be reached, pending approvals are denied at once (fail closed) and
the channel keeps retrying; events wait in a bounded queue (the oldest are dropped first).
A console that was restarted (it answers, but no longer knows the session) gets the session
registered again, and the guard's state announced, without the guard restarting.

A console on another machine is reached over HTTPS only (the token would cross the network
in clear otherwise); ``PAGEWARDEN_CONSOLE_CA`` names a CA bundle for a certificate the
system does not trust (a self-signed one).
"""

from __future__ import annotations

import ipaddress
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from pagewarden.console._hub import Hub
from pagewarden.console._protocol import API_VERSION, ProtocolError, check_command
from pagewarden.steps import GuardEvent

if TYPE_CHECKING:
    from pagewarden.console._link import ConsoleLink

__all__ = ["ConsoleUnavailable", "HttpChannel", "LocalChannel", "LocalController"]

_QUEUE = 5000
_BATCH = 200
_POLL_WAIT = 20.0


class ConsoleUnavailable(RuntimeError):
    """The console could not be reached or refused the session (the message never holds the token)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        #: the HTTP status the console answered with (None when it could not be reached)
        self.status = status


class LocalController:
    """Commands for a guard in the console's own process: straight to its link."""

    def __init__(self, link: ConsoleLink) -> None:
        self.link = link

    def send(self, command: dict[str, Any]) -> None:
        self.link.receive(command)


class LocalChannel:
    """A link to a `Console` running in this process (on this loop or on its own thread)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._controller: LocalController | None = None

    @property
    def available(self) -> bool:
        return not self.hub.closed

    def open(self, link: ConsoleLink) -> dict[str, Any]:
        self._controller = LocalController(link)
        return self.hub.register(link.guard.session_id, self._controller, remote=False)

    def send_event(self, event: GuardEvent) -> None:
        # Off the agent's hot path: the console's loop files the event (in order).
        self.hub.call_soon(self.hub.ingest, event.to_dict(), self._controller)

    def send_frame(self, session: str, data: bytes, viewport: tuple[int, int] | None) -> None:
        self.hub.call_soon(self.hub.put_frame, session, data, viewport)

    def close(self) -> None:
        self._controller = None


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def split_console_url(url: str) -> tuple[str, str]:
    """``(base, token)`` of a console URL such as ``http://127.0.0.1:8765/?token=…``; plain
    HTTP only to this machine."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.hostname:
        raise ValueError("a console URL looks like http://127.0.0.1:PORT/?token=TOKEN")
    token = (parse_qs(parts.query).get("token") or [""])[0]
    if not token:
        raise ValueError("the console URL has no token (copy the full URL `pagewarden console` printed)")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise ValueError(
            f"a console on another machine ({parts.hostname}) is reached over https:// only: "
            "its token would cross the network in clear (serve it with --tls-cert/--tls-key, "
            "or behind a TLS reverse proxy)"
        )
    return f"{parts.scheme}://{parts.netloc}", token


def _tls_context(base: str) -> ssl.SSLContext | None:
    """The client TLS context for `base`: the system's CAs, or ``PAGEWARDEN_CONSOLE_CA``'s."""
    if not base.startswith("https://"):
        return None
    cafile = os.environ.get("PAGEWARDEN_CONSOLE_CA") or None
    try:
        return ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(
            f"cannot read the console's CA bundle PAGEWARDEN_CONSOLE_CA={cafile}: {exc}"
        ) from None


class HttpChannel:
    """A link to a console in another process, over its local HTTP API."""

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        self.base, self._token = split_console_url(url)
        self._tls = _tls_context(self.base)
        self.timeout = timeout
        self._cond = threading.Condition()
        self._events: deque[dict[str, Any]] = deque(maxlen=_QUEUE)
        self._frame: tuple[str, bytes, tuple[int, int] | None] | None = None
        self._closing = False
        self._available = True
        self._losses = 0  # how many times the console was found gone
        self._link: ConsoleLink | None = None
        self._session = ""
        self._registered: set[str] = set()
        self._key = ""  # the session key the console gave at registration (X-Session-Key)
        self._register_lock = threading.Lock()
        self._generation = 0  # how many times the session was registered again (restarted console)
        self._sender = threading.Thread(target=self._send_loop, name="pagewarden-console-send", daemon=True)
        self._poller = threading.Thread(target=self._poll_loop, name="pagewarden-console-poll", daemon=True)

    def __repr__(self) -> str:  # never show the token
        return f"HttpChannel({self.base})"

    @property
    def available(self) -> bool:
        return self._available

    # -- HTTP ---------------------------------------------------------------------------
    def _request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        request = urllib.request.Request(self.base + path, data=body, method=method)
        request.add_header("Authorization", f"Bearer {self._token}")
        if self._key:
            request.add_header("X-Session-Key", self._key)
        if body is not None:
            request.add_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(
                request, timeout=timeout or self.timeout, context=self._tls
            ) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            raise ConsoleUnavailable(
                f"the console at {self.base} answered {exc.code}: {detail}", exc.code
            ) from None
        except (OSError, ValueError) as exc:
            raise ConsoleUnavailable(f"the console at {self.base} cannot be reached: {exc}") from None
        return json.loads(payload) if payload else None

    def _post_json(self, path: str, data: Any, **kw: Any) -> Any:
        return self._request("POST", path, json.dumps(data, default=str).encode("utf-8"), **kw)

    # -- Channel ------------------------------------------------------------------------
    def open(self, link: ConsoleLink) -> dict[str, Any]:
        self._link = link
        self._session = link.guard.session_id
        answer = self._post_json(f"/api/v{API_VERSION}/sessions", {"session": self._session})
        if not isinstance(answer, dict):
            raise ConsoleUnavailable(f"the console at {self.base} gave an unexpected answer")
        self._key = str(answer.get("key") or "")
        self._registered.add(self._session)
        self._sender.start()
        self._poller.start()
        return answer

    def send_event(self, event: GuardEvent) -> None:
        with self._cond:
            self._events.append(event.to_dict())
            self._cond.notify()

    def send_frame(self, session: str, data: bytes, viewport: tuple[int, int] | None) -> None:
        with self._cond:
            self._frame = (session, data, viewport)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._sender.is_alive():
            self._sender.join(self.timeout)

    # -- threads ------------------------------------------------------------------------
    def _lost(self) -> None:
        with self._cond:
            self._available = False
            self._losses += 1
        if self._link is not None:
            self._link.channel_lost()

    def _reached(self, losses_before: int) -> None:
        """A request succeeded: the console is available again, unless it was found gone
        while the request was in flight (a long poll the dying console ended is no sign
        that it is back)."""
        with self._cond:
            if self._losses == losses_before:
                self._available = True

    def _register_again(self, generation: int) -> None:
        """The console answers but has forgotten the session (it was restarted): register it
        again (once for both threads) and tell the link, which announces where it stands."""
        with self._register_lock:
            if self._generation != generation:
                return  # the other thread did it meanwhile
            answer = self._post_json(f"/api/v{API_VERSION}/sessions", {"session": self._session})
            if isinstance(answer, dict) and answer.get("key"):
                self._key = str(answer["key"])
            self._registered = {self._session}
            self._generation += 1
        link = self._link
        if link is not None:
            link.reattached(answer if isinstance(answer, dict) else {})

    def _forgotten(self, exc: ConsoleUnavailable, generation: int) -> bool:
        """Whether `exc` says the console forgot the session, which is then registered again."""
        if exc.status not in (404, 409) or self._closing:
            return False
        try:
            self._register_again(generation)
        except ConsoleUnavailable:
            return False
        return True

    def _send_loop(self) -> None:
        backoff = 0.5
        while True:
            with self._cond:
                while not self._events and self._frame is None and not self._closing:
                    self._cond.wait()
                if not self._events and self._frame is None and self._closing:
                    return
                batch = [self._events.popleft() for _ in range(min(_BATCH, len(self._events)))]
                frame, self._frame = self._frame, None
                losses, generation = self._losses, self._generation
            try:
                for session in {e["session"] for e in batch} - self._registered:
                    self._post_json(
                        f"/api/v{API_VERSION}/sessions", {"session": session, "alias_of": self._session}
                    )
                    self._registered.add(session)
                if batch:
                    self._post_json(f"/api/v{API_VERSION}/events", {"events": batch})
                if frame is not None:
                    session, data, viewport = frame
                    headers = {"X-Viewport": f"{viewport[0]}x{viewport[1]}"} if viewport else {}
                    self._request(
                        "PUT",
                        f"/api/v{API_VERSION}/sessions/{session}/frame",
                        data,
                        content_type="image/jpeg",
                        headers=headers,
                    )
                self._reached(losses)
                backoff = 0.5
            except ConsoleUnavailable as exc:
                self._lost()
                if self._closing:
                    return
                again = self._forgotten(exc, generation)
                with self._cond:
                    self._events.extendleft(reversed(batch))
                    if not again:
                        self._cond.wait(backoff)  # waiting to retry, not to synchronise
                backoff = 0.5 if again else min(backoff * 2, 5.0)

    def _poll_loop(self) -> None:
        seq, backoff, seen = 0, 0.5, 0
        while not self._closing:
            losses, generation = self._losses, self._generation
            if generation != seen:  # registered again: the new console numbers from 1
                seq, seen = 0, generation
            try:
                answer = self._request(
                    "GET",
                    f"/api/v{API_VERSION}/sessions/{self._session}/commands?after={seq}&wait={_POLL_WAIT:g}",
                    timeout=_POLL_WAIT + self.timeout,
                )
                self._reached(losses)
                backoff = 0.5
            except ConsoleUnavailable as exc:
                self._lost()
                if self._forgotten(exc, generation):
                    backoff = 0.5
                    continue
                time.sleep(backoff)  # retry pacing for a console that went away
                backoff = min(backoff * 2, 5.0)
                continue
            for command in (answer or {}).get("commands", []):
                seq = max(seq, int(command.get("seq", seq)))
                try:
                    checked = check_command(command)
                except ProtocolError:
                    continue
                if self._link is not None:
                    self._link.receive(checked)
