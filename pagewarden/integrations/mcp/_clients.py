"""Who may use the MCP server over HTTP: bearer tokens, each naming a client.

Tokens come from the environment or a file, never only from the command line (where other users
of the machine can read them in the process list):

* ``PAGEWARDEN_MCP_TOKEN``: one token; its sessions are named after the client's own
  ``clientInfo``.
* a tokens file (``--tokens-file FILE`` or ``PAGEWARDEN_MCP_TOKENS_FILE``), YAML or JSON::

      clients:
        - name: research-agent          # the agent's name in the console, the trace, telemetry
          token: "…"                    # at least 32 characters; or
          token_sha256: "…"             # the token's SHA-256 (hex): the file then holds no token
          policies: [research.yaml]     # optional: judged with these too (relative to the file)
          goal: "Summarise the docs."   # optional: the goal of every session of this client
          max_sessions: 2               # optional: instead of --max-sessions-per-client

  A file that holds tokens in clear must be readable by its owner only (``chmod 600``).
* neither, on loopback: a token the server makes once and keeps in
  ``<config dir>/mcp-token`` (0600), printed once with the client configuration to paste.

A presented token is compared by its SHA-256 digest, in constant time, against every client.
Nothing here ever writes a token to a log, a trace or an error message.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pagewarden._userdir import config_dir, private_dir, unwritable
from pagewarden.policies import PolicyError, PolicySet
from pagewarden.trace import global_secrets

__all__ = [
    "MIN_TOKEN_LENGTH",
    "TOKENS_FILE_ENV",
    "TOKEN_ENV",
    "Client",
    "Clients",
    "ClientsError",
    "local_token",
    "opening_client",
    "token_digest",
]

TOKEN_ENV = "PAGEWARDEN_MCP_TOKEN"
TOKENS_FILE_ENV = "PAGEWARDEN_MCP_TOKENS_FILE"
#: the file of the token the server makes for itself on loopback (in the config dir)
LOCAL_TOKEN_FILE = "mcp-token"
MIN_TOKEN_LENGTH = 32
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,120}$")
_FIELDS = {"name", "token", "token_sha256", "policies", "goal", "max_sessions"}

#: the client whose request opens an MCP session (set by the HTTP gate for the SDK's session
#: task, which copies it; read by the server when the session starts)
opening_client: contextvars.ContextVar[Client | None] = contextvars.ContextVar(
    "pagewarden_mcp_opening_client", default=None
)


class ClientsError(ValueError):
    """The tokens could not be read (the message never holds a token)."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True, eq=False)
class Client:
    """One credential: the token's digest, the client it names and what it is limited to.

    `name` is the agent's name in the console, the trace and OpenTelemetry (None: the client's
    own ``clientInfo`` name); `policy_sets` are judged on top of the server's; `goal` is the goal
    of every session the client opens (``set_goal`` is then not offered); `max_sessions` caps its
    open sessions (None: the server's per-client limit). `key` identifies it to the MCP SDK
    (a session answers only the credential that opened it)."""

    key: str
    digest: bytes = field(repr=False)
    name: str | None = None
    policy_sets: tuple[PolicySet, ...] = ()
    goal: str | None = None
    max_sessions: int | None = None

    def __repr__(self) -> str:
        return f"Client({self.key!r}, name={self.name!r})"


class Clients:
    """The credentials a server accepts (`match`), and where they came from (`source`)."""

    def __init__(self, clients: Sequence[Client], source: str) -> None:
        if not clients:
            raise ClientsError(f"{source} names no client")
        seen: set[bytes] = set()
        for client in clients:
            if client.digest in seen:
                raise ClientsError(f"{source}: two clients have the same token ({client.key})")
            seen.add(client.digest)
        self.clients = tuple(clients)
        self.source = source

    def match(self, token: str | None) -> Client | None:
        """The client `token` belongs to (None for no token or a wrong one); every client is
        compared, in constant time, whatever matches."""
        if not token:
            return None
        digest = _digest(token)
        found = None
        for client in self.clients:
            if hmac.compare_digest(digest, client.digest):
                found = client
        return found

    def __len__(self) -> int:
        return len(self.clients)

    # -- sources ------------------------------------------------------------------------
    @classmethod
    def from_token(cls, token: str, source: str = TOKEN_ENV) -> Clients:
        """One unnamed client with `token`."""
        _check_token(token, source)
        return cls([Client(key="token", digest=_digest(token))], source)

    @classmethod
    def from_file(cls, path: str | Path) -> Clients:
        """The clients of a tokens file (see the module's documentation)."""
        path = Path(path).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise ClientsError(
                f"cannot read the tokens file {path}: {getattr(exc, 'strerror', None) or exc}"
            ) from None
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            where = getattr(exc, "problem_mark", None)
            line = f" (line {where.line + 1})" if where is not None else ""
            raise ClientsError(f"the tokens file {path} is not valid YAML or JSON{line}") from None
        entries = data.get("clients") if isinstance(data, Mapping) else None
        if not isinstance(entries, list) or not entries:
            raise ClientsError(
                f"the tokens file {path} needs a 'clients' list (see docs/guides/mcp.md#tokens)"
            )
        clients = [_client(entry, i, path) for i, entry in enumerate(entries)]
        clear = any(isinstance(e, Mapping) and "token" in e for e in entries)
        if clear and os.name == "posix" and mode & 0o077:
            raise ClientsError(
                f"the tokens file {path} holds tokens and other users may read it: chmod 600 {path}, "
                "or keep only their token_sha256 in it"
            )
        names = [c.name for c in clients if c.name is not None]
        if len(names) != len(set(names)):
            raise ClientsError(f"the tokens file {path}: two clients have the same name")
        return cls(clients, str(path))

    @classmethod
    def from_environment(cls, tokens_file: str | Path | None = None) -> Clients | None:
        """The configured clients: `tokens_file` (or ``PAGEWARDEN_MCP_TOKENS_FILE``) and
        ``PAGEWARDEN_MCP_TOKEN`` together; None when neither is set."""
        found: list[Client] = []
        sources = []
        file = tokens_file or os.environ.get(TOKENS_FILE_ENV) or None
        if file:
            from_file = cls.from_file(file)
            found.extend(from_file.clients)
            sources.append(from_file.source)
        token = os.environ.get(TOKEN_ENV) or None
        if token:
            found.extend(cls.from_token(token).clients)
            sources.append(TOKEN_ENV)
        if not found:
            return None
        return cls(found, " and ".join(sources))


def _check_token(token: Any, where: str) -> str:
    """`token` if it is fit to be one; it is also registered for redaction, so that it never
    shows in clear in a log line or an error even by mistake."""
    if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH:
        raise ClientsError(
            f"{where}: a token must be a string of at least {MIN_TOKEN_LENGTH} characters "
            '(make one with: python -c "import secrets; print(secrets.token_urlsafe(32))")'
        )
    if any(ch.isspace() or ord(ch) < 33 or ord(ch) > 126 for ch in token):
        raise ClientsError(f"{where}: a token is printable ASCII without spaces (it goes in an HTTP header)")
    global_secrets().add(token, label="MCP token", enforce=False)
    return token


def _client(entry: Any, index: int, path: Path) -> Client:
    where = f"{path}: clients[{index}]"
    if not isinstance(entry, Mapping):
        raise ClientsError(f"{where} must be a mapping with a name and a token")
    unknown = sorted(str(k) for k in entry if k not in _FIELDS)
    if unknown:
        raise ClientsError(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_FIELDS))})"
        )
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or not name.strip():
        raise ClientsError(f"{where}: 'name' must be 1 to 120 printable characters")
    where = f"{path}: client {name!r}"
    if ("token" in entry) == ("token_sha256" in entry):
        raise ClientsError(f"{where} needs either 'token' or 'token_sha256'")
    if "token" in entry:
        digest = _digest(_check_token(entry["token"], where))
    else:
        hexed = entry["token_sha256"]
        if not isinstance(hexed, str) or not _HEX64.match(hexed):
            raise ClientsError(f"{where}: 'token_sha256' must be 64 hexadecimal digits")
        digest = bytes.fromhex(hexed)
    goal = entry.get("goal")
    if goal is not None and (not isinstance(goal, str) or not goal.strip()):
        raise ClientsError(f"{where}: 'goal' must be a non-empty string")
    limit = entry.get("max_sessions")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ClientsError(f"{where}: 'max_sessions' must be a whole number of at least 1")
    policies = entry.get("policies") or []
    if isinstance(policies, str):
        policies = [policies]
    if not isinstance(policies, list) or not all(isinstance(p, str) for p in policies):
        raise ClientsError(f"{where}: 'policies' must be a list of policy file paths")
    sets = []
    for item in policies:
        file = Path(item).expanduser()
        try:
            sets.append(PolicySet.load(file if file.is_absolute() else path.parent / file))
        except PolicyError as exc:
            raise ClientsError(f"{where}: {exc}") from None
    return Client(
        key=f"client:{name}", digest=digest, name=name, policy_sets=tuple(sets), goal=goal, max_sessions=limit
    )


def local_token(directory: Path | None = None) -> tuple[str, Path, bool]:
    """The token the server keeps for itself on loopback when none is configured: ``(token,
    file, created)``; made on first use (0600 in the per-user config directory)."""
    home = private_dir(directory or config_dir())
    path = home / LOCAL_TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        try:
            if os.name == "posix" and path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)
            token = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ClientsError(
                f"cannot read the MCP server's token file {path} ({getattr(exc, 'strerror', None) or exc}): "
                "delete it to make a new token"
            ) from None
        _check_token(token, str(path))
        return token, path, False
    except OSError as exc:
        raise unwritable(path, exc) from exc
    token = _check_token(secrets.token_urlsafe(32), str(path))
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
    return token, path, True


def token_digest(token: str) -> str:
    """The ``token_sha256`` of `token` for a tokens file (hex)."""
    return hashlib.sha256(token.encode()).hexdigest()
