"""Tests of the framework integrations (BrowserGym, browser-use, MCP).

browser-use configures logging when imported (it empties the root logger's handlers) and
sends telemetry unless told not to: neither, in the test session (set before any import).
"""

import os

os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
