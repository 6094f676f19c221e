"""Test helpers for pagewarden and its users: a local multi-origin site server,
`ScriptedLLM`, an OpenAI-compatible model server answering from a script, and
`PostgresServer`, a throw-away PostgreSQL server for the policy store.

`LocalSite` serves several made-up origins (``forum.test``, ``evil.test`` …) from one
port on 127.0.0.1; Chromium reaches them through `chromium_launch_options(host_map=…)`.
Every request is recorded, so a test can assert what did, or did not, reach a host.
"""

from __future__ import annotations

import mimetypes
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from pagewarden._postgres_server import PostgresServer, find_postgres_bindir
from pagewarden._scripted_llm import Reply, ScriptedLLM, ScriptedRequest

__all__ = [
    "LocalSite",
    "PostgresServer",
    "RecordedRequest",
    "Reply",
    "Response",
    "ScriptedLLM",
    "ScriptedRequest",
    "find_postgres_bindir",
]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request that reached the site."""

    method: str
    host: str
    path: str
    query: dict[str, list[str]]
    body: bytes
    headers: dict[str, str]

    @property
    def form(self) -> dict[str, list[str]]:
        """The body parsed as an urlencoded form."""
        return parse_qs(self.body.decode("utf-8", "replace"))


@dataclass(slots=True)
class Response:
    """What a dynamic route returns."""

    body: str | bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[RecordedRequest], Response]


class LocalSite:
    """A threaded HTTP server for several host names on one 127.0.0.1 port.

    Hosts map to a directory of static files (``add_directory``) and/or to dynamic routes
    (``route``). Unknown hosts and paths get 404. Use as a context manager. It can also be a
    browser's proxy (``--proxy-server``, a context's ``proxy``): requests in absolute form, and
    plain HTTP through a ``CONNECT`` tunnel, are served and recorded by their ``Host``.
    """

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._dirs: dict[str, Path] = {}
        self._routes: dict[tuple[str, str], Handler] = {}
        self._lock = threading.Lock()
        site = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # silence
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                host = (self.headers.get("Host") or "").split(":")[0].lower()
                parts = urlsplit(self.path)
                request = RecordedRequest(
                    self.command, host, parts.path, parse_qs(parts.query), body, dict(self.headers.items())
                )
                with site._lock:
                    site.requests.append(request)
                response = site._respond(request)
                payload = response.body.encode("utf-8") if isinstance(response.body, str) else response.body
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Cache-Control", "no-store")
                for key, value in response.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _serve

            def do_CONNECT(self) -> None:
                # As a browser's proxy: the tunnel is opened (and recorded); the plain HTTP
                # requests sent through it are then served like any other (TLS ones fail).
                target = self.path.rsplit(":", 1)[0].strip("[]").lower()
                headers = dict(self.headers.items())
                with site._lock:
                    site.requests.append(RecordedRequest("CONNECT", target, "", {}, b"", headers))
                self.send_response(200, "Connection Established")
                self.end_headers()
                self.close_connection = False

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="pagewarden-site", daemon=True
        )

    # -- configuration --------------------------------------------------------------------
    def add_directory(self, host: str, directory: str | Path) -> None:
        """Serve files of `directory` for `host` (``/`` serves ``index.html``)."""
        self._dirs[host.lower()] = Path(directory)

    def route(self, host: str, path: str, handler: Handler) -> None:
        """Answer `path` on `host` (any method) with `handler(request)`."""
        self._routes[(host.lower(), path)] = handler

    def url(self, host: str, path: str = "/") -> str:
        """The URL of `path` on `host` as the browser should use it (port 80 is mapped)."""
        return f"http://{host}{path}"

    def requests_to(self, host: str, path: str | None = None) -> list[RecordedRequest]:
        """Recorded requests for `host` (and `path`)."""
        with self._lock:
            return [r for r in self.requests if r.host == host and (path is None or r.path == path)]

    # -- serving --------------------------------------------------------------------------
    def _respond(self, request: RecordedRequest) -> Response:
        handler = self._routes.get((request.host, request.path)) or self._routes.get(("*", request.path))
        if handler is not None:
            return handler(request)
        directory = self._dirs.get(request.host)
        if directory is None:
            return Response(f"unknown host {request.host}", status=404, content_type="text/plain")
        relative = request.path.lstrip("/") or "index.html"
        target = (directory / relative).resolve()
        if target.is_dir():
            target = target / "index.html"
        if not target.is_relative_to(directory.resolve()) or not target.is_file():
            return Response("not found", status=404, content_type="text/plain")
        content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type == "application/javascript":
            content_type += "; charset=utf-8"
        return Response(target.read_bytes(), content_type=content_type)

    def start(self) -> LocalSite:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LocalSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
