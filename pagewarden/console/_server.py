"""The console's web server (Tornado): the page, its live stream, its API, and the guards' API.

Tornado runs on asyncio's loop, so the console can share the agent's event loop (async API)
or run on a thread of its own (sync API, the CLI). Routes:

=========================================  ======  =====  ============================
path                                        method  role   what
=========================================  ======  =====  ============================
``/``                                       GET     view   the console page
``/static/…``                               GET     -      its script and styles
``/api/stream?watch=ID&agent=…``           GET     view   server-sent events
``/api/sessions[/ID]?agent=…&host=…``       GET     view   session list / one session
``/api/approvals?agent=…&host=…``           GET     view   pending approvals
``/api/sessions/ID/frame.jpg``              GET     view   newest picture of the page
``/sessions/ID/report``                     GET     view   the session's report (HTML)
``/api/sessions/ID/control``                POST    full   pause/resume/stop/takeover/handback
``/api/sessions/ID/goal``                   POST    full   change the goal
``/api/sessions/ID/approvals/AID``          POST    full   approve or deny
``/api/sessions/ID/orders``                 POST    full   act on the page (taken over)
``/api/v1/sessions``                        POST    guard  a guard registers (other process)
``/api/v1/events``                          POST    guard  a guard's events
``/api/v1/sessions/ID/frame``               PUT     guard  a guard's newest frame
``/api/v1/sessions/ID/commands?after=N``    GET     guard  long poll for commands
=========================================  ======  =====  ============================

GET requests take the token from the ``token`` query argument or the Authorization header;
every other method only from the header (see `_access`). Roles: ``view`` is the read-only or
the full token, ``full`` the full token, ``guard`` the guard or the full token. The list,
the approvals and the stream take a filter (``agent``, ``host``, ``status``, each
repeatable; `_filters`).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

import tornado.httpserver
import tornado.iostream
import tornado.netutil
import tornado.web

from pagewarden.console._access import CONSOLE_CSP, REPORT_CSP, SECURITY_HEADERS, Access, Role
from pagewarden.console._filters import SessionFilter
from pagewarden.console._hub import Hub, RemoteController
from pagewarden.console._protocol import CONTROL_ACTIONS, ProtocolError, check_event, check_order
from pagewarden.console._report import render_report
from pagewarden.trace import get_logger

__all__ = ["make_app"]

_log = get_logger(component="console")
_SID = r"([A-Za-z0-9_.:-]{1,64})"
_MAX_BODY = 8 * 1024 * 1024
_KEEPALIVE_S = 15.0


def _static_dir() -> Path:
    return Path(str(resources.files("pagewarden.console").joinpath("static")))


class _Secured:
    """Mixin: the Host check and the security headers on every answer."""

    access: Access

    def _secure(self) -> None:
        handler: tornado.web.RequestHandler = self  # type: ignore[assignment]
        for key, value in SECURITY_HEADERS.items():
            handler.set_header(key, value)
        handler.set_header("Content-Security-Policy", CONSOLE_CSP)
        if not self.access.host_ok(handler.request.headers.get("Host")):
            raise tornado.web.HTTPError(403, reason="Wrong Host")


class BaseHandler(_Secured, tornado.web.RequestHandler):
    """Common checks for every console route."""

    def initialize(self, console: Any) -> None:
        self.console = console
        self.hub: Hub = console.hub
        self.access = console.access

    def prepare(self) -> None:
        self._secure()

    def set_default_headers(self) -> None:
        self.clear_header("Server")

    def check_xsrf_cookie(self) -> None:  # the token header replaces cookies
        return

    def _token(self, *, query: bool) -> str | None:
        header = self.request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            return header[7:].strip()
        return self.get_query_argument("token", None) if query else None

    def need(self, role: Role) -> Role:
        """The caller's role, one that grants `role`, or 403. State-changing requests also
        pass the Origin checks and must carry the token in the header."""
        changing = self.request.method not in ("GET", "HEAD")
        granted = self.access.role(self._token(query=not changing))
        if granted is None:
            raise tornado.web.HTTPError(403, reason="Token required")
        if granted != "full" and granted != role:
            reasons = {"view": "Read-only token", "guard": "Guard token (attaching guards only)"}
            raise tornado.web.HTTPError(403, reason=reasons[granted])
        if changing and not self.access.origin_ok(
            self.request.headers.get("Origin"), self.request.headers.get("Sec-Fetch-Site")
        ):
            raise tornado.web.HTTPError(403, reason="Cross-origin request refused")
        return granted

    def session_filter(self) -> SessionFilter:
        """The request's filter (``agent``, ``host``, ``status``), or 400."""
        try:
            return SessionFilter.from_query(self.get_query_arguments)
        except ProtocolError as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)) from None

    def body_json(self) -> Any:
        if not self.request.headers.get("Content-Type", "").startswith("application/json"):
            raise tornado.web.HTTPError(415, reason="JSON expected")
        try:
            return json.loads(self.request.body or b"null")
        except ValueError:
            raise tornado.web.HTTPError(400, reason="Malformed JSON") from None

    def send_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(data, default=str))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """Log a failure without the request URI (it may hold the token)."""
        if isinstance(value, tornado.web.HTTPError):
            return
        _log.error("console_handler_failed", path=self.request.path, error=f"{typ.__name__}: {value}")

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps({"error": self._reason}))


class StaticHandler(_Secured, tornado.web.StaticFileHandler):
    """The console's own script and styles (no data in them, so no token)."""

    def initialize(self, path: str, access: Access) -> None:  # type: ignore[override]
        super().initialize(path)
        self.access = access

    def prepare(self) -> None:
        self._secure()

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", "no-store")


class IndexHandler(BaseHandler):
    def get(self) -> None:
        self.need("view")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((_static_dir() / "console.html").read_bytes())


class NoIconHandler(BaseHandler):
    def get(self) -> None:
        self.set_status(204)
        self.finish()


class StreamHandler(BaseHandler):
    """Server-sent events: ``hello`` (the state), then ``summary``, ``event``, ``frame``."""

    def on_connection_close(self) -> None:
        stream = getattr(self, "_stream", None)
        if stream is not None:
            stream.queue.put_nowait(("bye", {}))

    def _send(self, kind: str, data: Any) -> None:
        self.write(f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n")

    async def get(self) -> None:
        role = self.need("view")
        watch = self.get_query_argument("watch", None) or None
        only = self.session_filter()
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self._stream = stream = self.hub.open_stream(watch, role, only)
        try:
            self._send(
                "hello",
                {
                    "role": role,
                    "filter": only.to_dict(),
                    "facets": self.hub.facets(),
                    "sessions": self.hub.summaries(only),
                    "approvals": self.hub.approvals(only),
                    "detail": self.hub.detail(watch) if watch else None,
                },
            )
            await self.flush()
            while True:
                try:
                    kind, data = await asyncio.wait_for(stream.queue.get(), _KEEPALIVE_S)
                except TimeoutError:
                    self.write(": keep-alive\n\n")
                    await self.flush()
                    continue
                if kind == "bye":
                    break
                self._send(kind, data)
                while not stream.queue.empty():
                    kind, data = stream.queue.get_nowait()
                    if kind == "bye":
                        return
                    self._send(kind, data)
                await self.flush()
        except tornado.iostream.StreamClosedError:
            pass
        finally:
            self.hub.close_stream(stream)


class SessionsHandler(BaseHandler):
    def get(self, session: str | None = None) -> None:
        self.need("view")
        if session is None:
            only = self.session_filter()
            self.send_json({"filter": only.to_dict(), "sessions": self.hub.summaries(only)})
            return
        detail = self.hub.detail(session)
        if detail is None:
            raise tornado.web.HTTPError(404, reason="No such session")
        self.send_json(detail)


class ApprovalsHandler(BaseHandler):
    def get(self) -> None:
        self.need("view")
        only = self.session_filter()
        self.send_json({"filter": only.to_dict(), "approvals": self.hub.approvals(only)})


class FrameHandler(BaseHandler):
    def get(self, session: str) -> None:
        self.need("view")
        frame = self.hub.frame(session)
        if frame is None:
            raise tornado.web.HTTPError(404, reason="No picture yet")
        self.set_header("Content-Type", "image/jpeg")
        self.finish(frame)


class ReportHandler(BaseHandler):
    def get(self, session: str) -> None:
        self.need("view")
        record = self.hub.record(session)
        if record is None:
            raise tornado.web.HTTPError(404, reason="No such session")
        self.set_header("Content-Security-Policy", REPORT_CSP)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(render_report(record))


class _CommandHandler(BaseHandler):
    def command(self, session: str, command: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.hub.command(session, command)
        except KeyError:
            raise tornado.web.HTTPError(404, reason="No such session") from None
        except ProtocolError as exc:
            raise tornado.web.HTTPError(
                409 if "pending" in str(exc) or "ended" in str(exc) else 400, reason=str(exc)
            ) from None


class ControlHandler(_CommandHandler):
    def post(self, session: str) -> None:
        self.need("full")
        body = self.body_json()
        action = body.get("action") if isinstance(body, dict) else None
        if action not in CONTROL_ACTIONS:
            raise tornado.web.HTTPError(400, reason=f"action must be one of {', '.join(CONTROL_ACTIONS)}")
        self.send_json(self.command(session, {"type": action}), 202)


class GoalHandler(_CommandHandler):
    def post(self, session: str) -> None:
        self.need("full")
        body = self.body_json()
        goal = body.get("goal") if isinstance(body, dict) else None
        self.send_json(self.command(session, {"type": "goal", "goal": goal}), 202)


class DecideHandler(_CommandHandler):
    def post(self, session: str, approval: str) -> None:
        self.need("full")
        body = self.body_json()
        if not isinstance(body, dict):
            raise tornado.web.HTTPError(400, reason="an object expected")
        command = {
            "type": "decide",
            "approval": approval,
            "approved": body.get("approved"),
            "remember": body.get("remember"),
            # who answers: a person's own token or the proxy's user; the shared token is "console"
            "by": self.access.person(self._token(query=False), self.request.headers) or "console",
        }
        self.send_json(self.command(session, command), 202)


class OrderHandler(_CommandHandler):
    def post(self, session: str) -> None:
        self.need("full")
        body = self.body_json()
        if not isinstance(body, dict):
            raise tornado.web.HTTPError(400, reason="an object expected")
        try:
            order = check_order(body.get("op"), body.get("args"))
        except ProtocolError as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)) from None
        self.send_json(self.command(session, {"type": "order", "order": uuid.uuid4().hex[:12], **order}), 202)


# -- the guards' API (guards in other processes) ----------------------------------------------
class _GuardHandler(BaseHandler):
    """The guards' API. With the guard token, a session's requests must also carry the key its
    registration returned (``X-Session-Key``): one agent machine cannot speak for, take over or
    read the commands of another's session. The full token (the supervisor's) needs no key."""

    def owns(self, role: Role, controller: Any) -> None:
        """403 unless `role` may act for the session of `controller`."""
        if role == "full":
            return
        key = self.request.headers.get("X-Session-Key", "")
        if not isinstance(controller, RemoteController) or not hmac.compare_digest(
            key.encode(), controller.key.encode()
        ):
            raise tornado.web.HTTPError(403, reason="Session key required (X-Session-Key)")


class RegisterHandler(_GuardHandler):
    def post(self) -> None:
        role = self.need("guard")
        body = self.body_json()
        session = body.get("session") if isinstance(body, dict) else None
        if not isinstance(session, str) or not re.fullmatch(_SID[1:-1], session):
            raise tornado.web.HTTPError(400, reason="session must be an id of up to 64 characters")
        alias = body.get("alias_of")
        if isinstance(alias, str):  # a new session id of the same guard: the same controller
            controller = self.hub.controller(alias)
            self.owns(role, controller)
        else:
            existing = self.hub.controller(session)
            if existing is not None:
                try:
                    self.owns(role, existing)
                except tornado.web.HTTPError:
                    raise tornado.web.HTTPError(
                        409, reason="the session is registered by another guard"
                    ) from None
            controller = RemoteController(self.hub, key=getattr(existing, "key", None))
        if not isinstance(controller, RemoteController):
            controller = RemoteController(self.hub)
        answer = self.hub.register(session, controller, remote=True)
        self.send_json({**answer, "key": controller.key}, 201)


class EventsHandler(_GuardHandler):
    def post(self) -> None:
        role = self.need("guard")
        body = self.body_json()
        events = body.get("events") if isinstance(body, dict) else None
        if not isinstance(events, list):
            raise tornado.web.HTTPError(400, reason="events must be a list")
        try:
            checked = [check_event(e) for e in events]
        except ProtocolError as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)) from None
        unknown = {e["session"] for e in checked if self.hub.controller(e["session"]) is None}
        if unknown:
            raise tornado.web.HTTPError(409, reason="register the session first")
        for session in {e["session"] for e in checked}:
            self.owns(role, self.hub.controller(session))
        for event in checked:
            self.hub.ingest(event)
        self.send_json({"accepted": len(checked)})


class FramePutHandler(_GuardHandler):
    def put(self, session: str) -> None:
        role = self.need("guard")
        if self.request.headers.get("Content-Type") != "image/jpeg":
            raise tornado.web.HTTPError(415, reason="image/jpeg expected")
        controller = self.hub.controller(session)
        if controller is None:
            raise tornado.web.HTTPError(404, reason="No such session")
        self.owns(role, controller)
        data = self.request.body
        if not data.startswith(b"\xff\xd8"):
            raise tornado.web.HTTPError(400, reason="not a JPEG")
        match = re.fullmatch(r"(\d{1,5})x(\d{1,5})", self.request.headers.get("X-Viewport", ""))
        viewport = (int(match.group(1)), int(match.group(2))) if match else None
        self.hub.put_frame(session, data, viewport)
        self.set_status(204)
        self.finish()


class CommandsHandler(_GuardHandler):
    async def get(self, session: str) -> None:
        role = self.need("guard")
        controller = self.hub.controller(session)
        if not isinstance(controller, RemoteController):
            raise tornado.web.HTTPError(404, reason="No such remote session")
        self.owns(role, controller)
        try:
            after = int(self.get_query_argument("after", "0"))
            wait = min(max(float(self.get_query_argument("wait", "0")), 0.0), 60.0)
        except ValueError:
            raise tornado.web.HTTPError(400, reason="after and wait must be numbers") from None
        commands = await controller.wait(after, wait)
        if self.request.connection.stream.closed():  # type: ignore[union-attr]
            return
        self.send_json({"commands": commands})


def _log_request(handler: tornado.web.RequestHandler) -> None:
    """Tornado's access log, without the query string (it may hold the token)."""
    request = handler.request
    _log.debug(
        "console_request",
        method=request.method,
        path=request.path,
        status=handler.get_status(),
        ms=round(request.request_time() * 1000, 1),
    )


def make_app(console: Any) -> tornado.web.Application:
    """The Tornado application of `console` (a `Console`)."""
    ctx = {"console": console}
    return tornado.web.Application(
        [
            (r"/", IndexHandler, ctx),
            (r"/static/(.*)", StaticHandler, {"path": str(_static_dir()), "access": console.access}),
            (r"/favicon\.ico", NoIconHandler, ctx),
            (r"/api/stream", StreamHandler, ctx),
            (r"/api/sessions", SessionsHandler, ctx),
            (r"/api/approvals", ApprovalsHandler, ctx),
            (rf"/api/sessions/{_SID}", SessionsHandler, ctx),
            (rf"/api/sessions/{_SID}/frame\.jpg", FrameHandler, ctx),
            (rf"/api/sessions/{_SID}/control", ControlHandler, ctx),
            (rf"/api/sessions/{_SID}/goal", GoalHandler, ctx),
            (rf"/api/sessions/{_SID}/approvals/{_SID}", DecideHandler, ctx),
            (rf"/api/sessions/{_SID}/orders", OrderHandler, ctx),
            (rf"/sessions/{_SID}/report", ReportHandler, ctx),
            (r"/api/v1/sessions", RegisterHandler, ctx),
            (r"/api/v1/events", EventsHandler, ctx),
            (rf"/api/v1/sessions/{_SID}/frame", FramePutHandler, ctx),
            (rf"/api/v1/sessions/{_SID}/commands", CommandsHandler, ctx),
        ],
        xsrf_cookies=False,
        compress_response=False,
        serve_traceback=False,
        default_handler_class=_NotFound,
        default_handler_args=ctx,
        log_function=_log_request,
    )


class _NotFound(BaseHandler):
    def prepare(self) -> None:
        self._secure()
        raise tornado.web.HTTPError(404, reason="Not found")


async def listen(console: Any) -> tornado.httpserver.HTTPServer:
    """Bind and serve `console` on the running loop (over TLS when it has a certificate);
    returns the server."""
    context = console.ssl_context()
    sockets = tornado.netutil.bind_sockets(console.port, console.host)
    server = tornado.httpserver.HTTPServer(
        make_app(console), max_body_size=_MAX_BODY, idle_connection_timeout=120, ssl_options=context
    )
    server.add_sockets(sockets)
    console.port = sockets[0].getsockname()[1]
    return server
