"""Who gets in, and how much: the gate in front of the MCP server's streamable HTTP endpoint.

Every request must carry ``Authorization: Bearer <token>`` of a known client (`_clients`).
Without one the answer is ``401`` with a ``WWW-Authenticate: Bearer`` challenge as the MCP
authorization specification asks (RFC 6750, with ``resource_metadata`` naming the server's
RFC 9728 protected-resource metadata; pagewarden issues its tokens itself, so that document names
no OAuth authorization server), and the refusal is logged with the peer's address and the
reason, never the token. A known client is handed on to the MCP SDK as the request's
authenticated user, so a session answers only the credential that opened it.

Limits, each a clear JSON-RPC error while every other client keeps being served: a request body
over ``max_request_bytes``, declared or chunked (``413``), a new session past the server's
``max_sessions`` (``503``) or past its client's session limit (``429``). Idle sessions are
closed by the SDK (``session_idle_timeout``), which ends their context.
"""

from __future__ import annotations

import json
from typing import Any

from pagewarden.integrations.mcp._clients import Client, Clients, opening_client
from pagewarden.trace import get_logger

__all__ = ["Gate", "Limits"]

_log = get_logger(component="mcp")
_SESSION_HEADER = b"mcp-session-id"


class Limits:
    """The HTTP limits of one server: sessions in all, sessions per client, request bytes."""

    def __init__(self, max_sessions: int, max_sessions_per_client: int, max_request_bytes: int) -> None:
        for name, value in (
            ("max_sessions", max_sessions),
            ("max_sessions_per_client", max_sessions_per_client),
            ("max_request_bytes", max_request_bytes),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self.max_request_bytes = max_request_bytes


class Gate:
    """ASGI middleware: the bearer token, the size of the request, the number of sessions.

    `clients` None lets every request in (``--no-auth``, loopback only). `counts(client)` gives
    ``(open sessions in all, open sessions of client)``; sessions being opened are counted too.
    """

    def __init__(
        self,
        app: Any,
        *,
        clients: Clients | None,
        limits: Limits,
        counts: Any,
        resource_metadata: str | None = None,
    ) -> None:
        self.app = app
        self.clients = clients
        self.limits = limits
        self.counts = counts
        self.resource_metadata = resource_metadata
        self._opening: dict[Client | None, int] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        client: Client | None = None
        if self.clients is not None:
            token = _bearer(headers.get(b"authorization"))
            client = self.clients.match(token)
            if client is None:
                reason = "no bearer token" if token is None else "unknown bearer token"
                _log.warning("mcp_refused", reason=reason, peer=_peer(scope), path=scope.get("path"))
                await self._unauthorized(send, given=token is not None)
                return
            from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
            from mcp.server.auth.provider import AccessToken

            # the SDK binds a session to the credential that opened it (by client_id); the
            # token itself is not handed on
            scope["user"] = AuthenticatedUser(AccessToken(token=client.key, client_id=client.key, scopes=[]))
        size = headers.get(b"content-length")
        if size is not None and size.isdigit() and int(size) > self.limits.max_request_bytes:
            _log.warning("mcp_refused", reason="request too large", peer=_peer(scope), bytes=int(size),
                         client=_who(client))  # fmt: skip
            await _jsonrpc_error(
                send, 413,
                f"The request body is {int(size)} bytes; this server takes at most "
                f"{self.limits.max_request_bytes} (--max-request-bytes).",
            )  # fmt: skip
            return
        if size is None and scope.get("method") == "POST":
            # a body without a declared length (chunked): read up to the limit, then hand it on
            receive = await _bounded_body(receive, self.limits.max_request_bytes)
            if receive is None:
                _log.warning("mcp_refused", reason="request too large", peer=_peer(scope),
                             client=_who(client))  # fmt: skip
                await _jsonrpc_error(
                    send, 413,
                    "The request body is larger than this server takes: at most "
                    f"{self.limits.max_request_bytes} bytes (--max-request-bytes).",
                )  # fmt: skip
                return
        if scope.get("method") != "POST" or _SESSION_HEADER in headers:
            await self.app(scope, receive, send)
            return
        # a request without a session id opens a session
        refusal = self._over_limit(client)
        if refusal is not None:
            status, message = refusal
            _log.warning("mcp_refused", reason="session limit", peer=_peer(scope), client=_who(client))
            await _jsonrpc_error(send, status, message, retry_after=status == 503)
            return
        self._opening[client] = self._opening.get(client, 0) + 1
        reset = opening_client.set(client)
        try:
            await self.app(scope, receive, send)
        finally:
            opening_client.reset(reset)
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]

    def _over_limit(self, client: Client | None) -> tuple[int, str] | None:
        total, own = self.counts(client)
        total += sum(self._opening.values())
        own += self._opening.get(client, 0)
        limits = self.limits
        if total >= limits.max_sessions:
            return 503, (
                f"This MCP server has {total} open sessions, its limit (--max-sessions "
                f"{limits.max_sessions}): try again when one closes (idle sessions close by themselves)."
            )
        cap = client.max_sessions if client is not None and client.max_sessions is not None else None
        cap = cap or limits.max_sessions_per_client
        if own >= cap:
            return 429, (
                f"This client already has {own} open MCP sessions, its limit ({cap}): close one "
                "(an MCP client closes its session when it disconnects) or wait for an idle one to expire."
            )
        return None

    async def _unauthorized(self, send: Any, *, given: bool) -> None:
        # RFC 6750 section 3: no error code when the request had no credentials at all
        parts = ['realm="pagewarden"']
        if given:
            parts += ['error="invalid_token"', 'error_description="The bearer token is not valid"']
        if self.resource_metadata:
            parts.append(f'resource_metadata="{self.resource_metadata}"')
        description = (
            "This pagewarden MCP server needs the header 'Authorization: Bearer <token>' with a "
            "token it knows (see docs/guides/mcp.md#tokens)."
        )
        body = json.dumps({"error": "invalid_token" if given else "unauthorized",
                           "error_description": description}).encode()  # fmt: skip
        await send({
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", ("Bearer " + ", ".join(parts)).encode()),
                (b"cache-control", b"no-store"),
            ],
        })  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def _headers(scope: Any) -> dict[bytes, bytes]:
    """The request's headers, names in lower case (a repeated header: the first)."""
    found: dict[bytes, bytes] = {}
    for name, value in scope.get("headers") or ():
        found.setdefault(name.lower(), value)
    return found


def _bearer(value: bytes | None) -> str | None:
    if value is None:
        return None
    try:
        text = value.decode("latin-1").strip()
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any byte
        return None
    scheme, _, token = text.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def _bounded_body(receive: Any, limit: int) -> Any:
    """A ``receive`` that replays the request's body, read whole here; None when the body
    passes `limit` bytes (reading stops there)."""
    messages: list[Any] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break  # the client went away: hand that on
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            break
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
    pending: list[Any] = [{"type": "http.request", "body": body, "more_body": False}]
    pending += [m for m in messages if m["type"] != "http.request"]

    async def replay() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _peer(scope: Any) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


def _who(client: Client | None) -> str | None:
    return None if client is None else (client.name or client.key)


async def _jsonrpc_error(send: Any, status: int, message: str, *, retry_after: bool = False) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32600, "message": message}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after:
        headers.append((b"retry-after", b"30"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
