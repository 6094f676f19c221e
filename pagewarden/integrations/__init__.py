"""Integrations with the agent frameworks people already run (BrowserGym, browser-use, MCP).

Each lives in a subpackage of its own and needs its optional extra
(pagewarden's ``browsergym`` … extras); importing this package imports none of them.
"""
