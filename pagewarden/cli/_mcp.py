"""`pagewarden mcp`: the guarded browser MCP server (needs the ``mcp`` extra)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from pagewarden.cli._base import _error, _llm_config, _llm_options, _warning, err_console, main
from pagewarden.cli._proxy import _host_map
from pagewarden.policies import PolicyError

# the defaults of the HTTP limits (pagewarden.integrations.mcp._options: the extra may be missing)
DEFAULT_MAX_SESSIONS = 8
DEFAULT_MAX_SESSIONS_PER_CLIENT = 4
DEFAULT_SESSION_IDLE_TIMEOUT = 900.0
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024


@main.command("mcp")
@click.option(
    "--headless", is_flag=True, help="Run the browser headless (default: headed when a display is set)."
)
@click.option(
    "--browser",
    type=click.Choice(["chromium", "chrome", "msedge"]),
    default="chromium",
    show_default=True,
    help="Chromium build (chrome, msedge: an installed channel). pagewarden guards Chromium only.",
)
@click.option("--executable-path", type=click.Path(dir_okay=False), help="Path to the browser executable.")
@click.option(
    "--user-data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Persistent profile directory (default: <pagewarden config dir>/mcp-profile).",
)
@click.option("--isolated", is_flag=True, help="Keep the browser profile in memory, do not save it to disk.")
@click.option(
    "--storage-state",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A Playwright storage-state file for an isolated session (cookies, local storage).",
)
@click.option("-p", "--policies", "policy_files", multiple=True, type=click.Path(path_type=Path),
              help="Policy file (repeatable).")  # fmt: skip
@click.option("--goal", help="The user's goal for the session; with it, the set_goal tool is not offered.")
@click.option(
    "--set-goal/--no-set-goal",
    "set_goal_tool",
    default=True,
    show_default=True,
    help="Without --goal, offer the set_goal tool (usable only before any page content is shown).",
)
@click.option(
    "--console", "console_url", help="URL (with token) of a running `pagewarden console`: it answers ASK."
)
@click.option(
    "--record", type=click.Path(file_okay=False, path_type=Path), help="Record the session into DIR."
)
@click.option("--proxy/--no-proxy", default=True, show_default=True, help="The network layer (mitmproxy).")
@click.option("--map", "maps", multiple=True, help="Resolve HOST_PATTERN to 127.0.0.1:PORT ('*.test=8080').")
@click.option("--output-dir", type=click.Path(file_okay=False, path_type=Path), help="Where screenshots go.")
@click.option("--upload-dir", "upload_dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="A directory browser_file_upload may read from (repeatable; default: the working "
              "directory).")  # fmt: skip
@click.option("--no-evaluate", is_flag=True, help="Do not offer browser_evaluate at all.")
@click.option(
    "--caps",
    help="Comma-separated extra tool sets, as Playwright MCP's --caps: 'vision' offers the coordinate tools "
    "(browser_mouse_click_xy …). Playwright MCP's other sets are not offered (a warning says so).",
)
@click.option(
    "--secrets",
    "secrets_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A dotenv file of secrets the model types by name and never reads (Playwright MCP's --secrets); "
    "each may be typed only on the domains its '# domains:' comment names.",
)
@click.option("--port", type=int, help="Serve streamable HTTP on this port (at /mcp) instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind the HTTP server to. Beyond loopback only with --tls-cert/--tls-key or "
    "--behind-proxy.",
)
@click.option(
    "--allowed-hosts",
    help="Comma-separated Host header values the HTTP server answers ('*': any); default: the bound host "
    "and localhost.",
)
@click.option(
    "--shared-context",
    is_flag=True,
    help="HTTP: every client joins one session (one browser context, one guard, one goal, one trace) "
    "instead of one each.",
)
@click.option(
    "--tokens-file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="PAGEWARDEN_MCP_TOKENS_FILE",
    help="HTTP: the clients' bearer tokens, each with a client name (YAML; see the MCP guide). Also "
    "PAGEWARDEN_MCP_TOKEN. Default on loopback: a token kept in <config dir>/mcp-token.",
)
@click.option(
    "--no-auth", is_flag=True, help="HTTP on loopback only: serve any local process without a token."
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="HTTP: PEM certificate (chain) to serve HTTPS with.",
)
@click.option(
    "--tls-key", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="PEM key of --tls-cert."
)
@click.option(
    "--behind-proxy",
    is_flag=True,
    help="HTTP: a reverse proxy in front terminates TLS: listen beyond loopback without TLS of its own "
    "(needs --public-url).",
)
@click.option("--public-url", metavar="URL", help="HTTP: the address clients use (https://mcp.example.com).")
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    help="HTTP: open sessions in all (each a browser context).",
)
@click.option(
    "--max-sessions-per-client",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_SESSIONS_PER_CLIENT,
    show_default=True,
    help="HTTP: open sessions per token (a tokens file may set its own per client).",
)
@click.option(
    "--session-idle-timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_SESSION_IDLE_TIMEOUT,
    show_default=True,
    help="HTTP: seconds without a request or an open stream after which a session and its context "
    "close (0: never).",
)
@click.option(
    "--max-request-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_REQUEST_BYTES,
    show_default=True,
    help="HTTP: the largest request body accepted.",
)
@click.option("--timeout-action", type=float, default=5000, show_default=True, help="Action timeout (ms).")
@click.option(
    "--timeout-navigation", type=float, default=60000, show_default=True, help="Navigation timeout (ms)."
)
@_llm_options
def mcp_command(
    headless: bool, browser: str, executable_path: str | None, user_data_dir: Path | None, isolated: bool,
    storage_state: Path | None, policy_files: tuple[Path, ...], goal: str | None, set_goal_tool: bool,
    console_url: str | None, record: Path | None, proxy: bool, maps: tuple[str, ...], output_dir: Path | None,
    upload_dirs: tuple[Path, ...], no_evaluate: bool, caps: str | None, secrets_file: Path | None,
    port: int | None, host: str, allowed_hosts: str | None,
    shared_context: bool, tokens_file: Path | None, no_auth: bool, tls_cert: Path | None,
    tls_key: Path | None, behind_proxy: bool, public_url: str | None, max_sessions: int,
    max_sessions_per_client: int, session_idle_timeout: float, max_request_bytes: int,
    timeout_action: float, timeout_navigation: float,
    llm_base_url: str | None, llm_model: str | None, llm_config: Path | None,
) -> None:  # fmt: skip
    """A guarded browser MCP server: Playwright MCP's tools, every action checked by pagewarden.

    Speaks MCP over stdio (what a client config starts), or streamable HTTP with --port
    (endpoint http://HOST:PORT/mcp): a session (a browser context and a guard) per client, every
    request with a client's bearer token. Every action tool takes an optional `intent` judged
    with the action; a refused action is a tool error carrying the guard's guidance; page content
    is returned fenced as untrusted data with injected orders removed. See the MCP guide.
    """
    import asyncio
    import os

    try:
        from pagewarden.integrations.mcp import GuardedBrowserServer, ServerOptions, run_http, run_stdio
    except ImportError as exc:
        _error(
            "pagewarden mcp needs pagewarden's mcp extra: "
            f"pip install -c constraints.txt '/path/to/pagewarden[mcp]' ({exc})"
        )
        sys.exit(2)
    if not headless and sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        headless = True  # as Playwright MCP does: no display, no headed browser
    if port is not None and not (isolated or storage_state or user_data_dir or shared_context):
        isolated = True  # over HTTP each client gets a fresh context of its own
    options = ServerOptions(
        headless=headless,
        executable_path=executable_path,
        channel=None if browser == "chromium" else browser,
        user_data_dir=user_data_dir,
        isolated=isolated,
        storage_state=storage_state,
        policies=policy_files,
        goal=goal,
        set_goal_tool=set_goal_tool,
        llm=_llm_config(llm_base_url, llm_model, llm_config),
        console=console_url,
        record=record,
        proxy=proxy,
        host_map=_host_map(maps),
        output_dir=output_dir,
        upload_dirs=upload_dirs,
        evaluate=not no_evaluate,
        action_timeout_ms=timeout_action,
        navigation_timeout_ms=timeout_navigation,
        shared_context=shared_context,
        caps=_caps(caps),
        secrets=secrets_file,
    )
    try:
        server = GuardedBrowserServer(options)
    except (PolicyError, OSError, ValueError) as exc:
        _error(exc)
        sys.exit(2)
    if port is None:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run_stdio(server))
        return
    from pagewarden.integrations.mcp import HttpOptions, check_http

    try:
        clients, announce = _http_clients(tokens_file, no_auth, host)
        http = HttpOptions(
            host=host,
            port=port,
            allowed_hosts=tuple(h.strip() for h in (allowed_hosts or "").split(",") if h.strip()),
            clients=clients,
            auth=not no_auth,
            tls_cert=tls_cert,
            tls_key=tls_key,
            public_url=public_url,
            behind_proxy=behind_proxy,
            max_sessions=max_sessions,
            max_sessions_per_client=max_sessions_per_client,
            session_idle_timeout=session_idle_timeout or None,
            max_request_bytes=max_request_bytes,
        )
        check_http(server, http)
    except (PolicyError, OSError, ValueError) as exc:
        _error(exc)
        sys.exit(2)

    def ready(url: str) -> None:
        err_console.print(f"pagewarden mcp listening on {url}", highlight=False, markup=False)
        if no_auth:
            _warning(
                "--no-auth: ANY process on this machine can drive this browser, with no token. "
                "Use it only on a machine you alone use."
            )
        announce(url)

    try:
        asyncio.run(run_http(server, http, ready=ready))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        _error(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        sys.exit(1)


def _http_clients(tokens_file: Path | None, no_auth: bool, host: str) -> tuple[object, object]:
    """The tokens the HTTP server accepts and what to print once it listens: the configured
    ones (named, never printed), or on loopback the server's own token (printed once, when made,
    with the client configuration)."""
    from pagewarden.console import is_loopback
    from pagewarden.integrations.mcp import Clients, local_token

    if no_auth:
        return None, lambda url: None
    clients = Clients.from_environment(tokens_file)
    if clients is not None:
        source = clients.source

        def configured(url: str) -> None:
            err_console.print(
                f"{len(clients)} client token(s) from {source}: clients send "
                "'Authorization: Bearer <token>'.",
                highlight=False,
                markup=False,
            )

        return clients, configured
    if not is_loopback(host):
        return None, lambda url: None  # check_http says what is missing
    token, path, created = local_token()
    clients = Clients.from_token(token, source=str(path))

    def local(url: str) -> None:
        if created:
            err_console.print(_client_configuration(url, token, path), highlight=False, markup=False)
        else:
            err_console.print(
                f"Clients send 'Authorization: Bearer <token>' with the token in {path} (printed with the "
                "client configuration when it was made; delete the file for a new one).",
                highlight=False,
                markup=False,
            )

    return clients, local


def _client_configuration(url: str, token: str, path: Path) -> str:
    """The client configuration to paste, with the server's new token (printed this once)."""
    header = f"Bearer {token}"
    return f"""
A token for this MCP server was made and kept in {path} (readable by you only).
It is printed this once; every client sends it in an Authorization header:

  Claude Code:
    claude mcp add --transport http pagewarden {url} --header "Authorization: {header}"

  Cursor (~/.cursor/mcp.json):
    {{"mcpServers": {{"pagewarden": {{"url": "{url}", "headers": {{"Authorization": "{header}"}}}}}}}}

  VS Code (.vscode/mcp.json):
    {{"servers": {{"pagewarden": {{"type": "http", "url": "{url}",
      "headers": {{"Authorization": "{header}"}}}}}}}}

  Claude Desktop (claude_desktop_config.json, through mcp-remote):
    {{"mcpServers": {{"pagewarden": {{"command": "npx", "args": ["mcp-remote", "{url}", "--header",
      "Authorization:${{AUTH_HEADER}}"], "env": {{"AUTH_HEADER": "{header}"}}}}}}}}
"""


#: Playwright MCP's --caps sets that pagewarden mcp does not offer (warned about, not an error).
_PLAYWRIGHT_CAPS = frozenset(
    {"core", "tabs", "install", "pdf", "devtools", "network", "storage", "config", "testing"}
)


def _caps(value: str | None) -> tuple[str, ...]:
    """The --caps sets pagewarden offers; Playwright MCP's others are warned about, unknown
    names are an error."""
    from pagewarden.integrations.mcp import CAPABILITIES

    offered = []
    for name in (part.strip().lower() for part in (value or "").split(",")):
        if not name:
            continue
        if name in CAPABILITIES:
            offered.append(name)
        elif name in _PLAYWRIGHT_CAPS:
            if name != "core":
                err_console.print(
                    f"pagewarden mcp: Playwright MCP's '{name}' tools are not offered; ignored.",
                    highlight=False,
                    markup=False,
                )
        else:
            known = ", ".join(sorted(CAPABILITIES | _PLAYWRIGHT_CAPS))
            raise click.BadParameter(f"unknown capability {name!r} (known: {known})", param_hint="--caps")
    return tuple(dict.fromkeys(offered))
