"""Integrations with the tools people already run browser agents in: a guarded browser MCP
server (`pagewarden.integrations.mcp`), BrowserGym, browser-use.

Each is a subpackage with its own optional extra (``pagewarden[mcp]`` …); nothing here
imports them or their dependencies."""
