"""`pagewarden mcp`: a guarded browser MCP server (the ``mcp`` extra: the official MCP Python SDK).

Tools named and shaped like Playwright MCP's core set; every action goes through the guard
with the tool call's ``intent`` as the agent's reasoning; page content goes back fenced as
untrusted data with injected orders removed. Each client has a session of its own (a guard and
a browser context); over HTTP every request needs a client's bearer token. See
docs/guides/mcp.md.
"""

from pagewarden.integrations.mcp._clients import Client, Clients, ClientsError, local_token, token_digest
from pagewarden.integrations.mcp._errors import ToolFailure
from pagewarden.integrations.mcp._options import HttpOptions, ServerOptions
from pagewarden.integrations.mcp._secrets import NamedSecret, SecretBook, SecretsFileError, load_secrets
from pagewarden.integrations.mcp._server import GuardedBrowserServer
from pagewarden.integrations.mcp._session import McpSession
from pagewarden.integrations.mcp._snapshot import PageState, Removed, fence_page, strip_instructions
from pagewarden.integrations.mcp._tools import CAPABILITIES
from pagewarden.integrations.mcp._transports import check_http, endpoint_url, http_app, run_http, run_stdio

__all__ = [
    "CAPABILITIES",
    "Client",
    "Clients",
    "ClientsError",
    "GuardedBrowserServer",
    "HttpOptions",
    "McpSession",
    "NamedSecret",
    "PageState",
    "Removed",
    "SecretBook",
    "SecretsFileError",
    "ServerOptions",
    "ToolFailure",
    "check_http",
    "endpoint_url",
    "fence_page",
    "http_app",
    "load_secrets",
    "local_token",
    "run_http",
    "run_stdio",
    "strip_instructions",
    "token_digest",
]
