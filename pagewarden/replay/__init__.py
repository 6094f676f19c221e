"""Recorded sessions read back and replayed: offline against the current policies
(`replay_session`, `replay_records`) or again in Chromium against the recorded network flows
(`replay_in_browser`), with an HTML report (`render_replay_html`).

An adapter over the core: it builds guards from what a session recorded and, for the browser
replay, launches a guarded browser through the network layer."""

from pagewarden.replay._browser_replay import replay_in_browser
from pagewarden.replay._recorded import RecordedSession, load_session, read_records
from pagewarden.replay._replay import (
    REPLAY_FORMAT_VERSION,
    ReplayedStep,
    ReplayReport,
    browser_replay_problems,
    recorded_ran,
    replay_guard_options,
    replay_records,
    replay_report_details,
    replay_session,
)
from pagewarden.replay._replay_html import render_replay_html

__all__ = [
    "REPLAY_FORMAT_VERSION",
    "RecordedSession",
    "ReplayReport",
    "ReplayedStep",
    "browser_replay_problems",
    "load_session",
    "read_records",
    "recorded_ran",
    "render_replay_html",
    "replay_guard_options",
    "replay_in_browser",
    "replay_records",
    "replay_report_details",
    "replay_session",
]
