"""`pagewarden mcp`: the guarded browser MCP server (needs the ``mcp`` extra)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pagewarden.cli._base import _error, _llm_config, _llm_options, err_console, main
from pagewarden.cli._proxy import _host_map
from pagewarden.policies import PolicyError


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
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind the HTTP server to.")
@click.option(
    "--allowed-hosts",
    help="Comma-separated Host header values the HTTP server answers ('*': any); default: the bound host "
    "and localhost.",
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
    timeout_action: float, timeout_navigation: float,
    llm_base_url: str | None, llm_model: str | None, llm_config: Path | None,
) -> None:  # fmt: skip
    """A guarded browser MCP server: Playwright MCP's tools, every action checked by pagewarden.

    Speaks MCP over stdio (what a client config starts), or streamable HTTP with --port
    (endpoint http://HOST:PORT/mcp). Every action tool takes an optional `intent` judged with the
    action; a refused action is a tool error carrying the guard's guidance; page content is
    returned fenced as untrusted data with injected orders removed. See the MCP guide.
    """
    import asyncio
    import os

    try:
        from pagewarden.integrations.mcp import GuardedBrowserServer, ServerOptions, run_http, run_stdio
    except ImportError as exc:
        _error(f"pagewarden mcp needs the mcp extra: pip install 'pagewarden[mcp]' ({exc})")
        sys.exit(2)
    if not headless and sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        headless = True  # as Playwright MCP does: no display, no headed browser
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
        caps=_caps(caps),
        secrets=secrets_file,
    )
    try:
        server = GuardedBrowserServer(options)
    except (PolicyError, OSError, ValueError) as exc:
        _error(exc)
        sys.exit(2)
    try:
        if port is None:
            asyncio.run(run_stdio(server))
        else:
            hosts = [h.strip() for h in (allowed_hosts or "").split(",") if h.strip()]

            def ready(url: str) -> None:
                err_console.print(f"pagewarden mcp listening on {url}", highlight=False, markup=False)

            asyncio.run(run_http(server, host, port, hosts, ready=ready))
    except KeyboardInterrupt:
        pass


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
