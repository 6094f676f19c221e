"""Recorded sessions: one directory per guarded run, versioned, readable without a browser.

``Guard(record=DIR)`` (and ``launch(record=DIR)``) writes::

    DIR/manifest.json    format and pagewarden versions, created/closed, goal, mode, the
                         agent's name, configuration, sessions, step count, the files below
    DIR/policies.yaml    the user's policies in force, serialised (not a path), values redacted
    DIR/trace.jsonl      one trace line per judged step (with ``"ran"``: whether it executed)
    DIR/events.jsonl     the guard's other events (console, network …), one per line
    DIR/screenshots/     one PNG per step (with ``screenshots=True``)
    DIR/flows.mitm       the network flows, written by the network layer when it runs

`pagewarden.replay.load_session` reads such a directory back (or a bare directory holding only a
``trace.jsonl``, the format before manifests) and refuses, with a message saying why, a
manifest it does not understand.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import yaml

from pagewarden._version import __version__
from pagewarden.trace._redact import redact_tree, step_redactor
from pagewarden.trace._writer import TRACE_FORMAT_VERSION, TraceWriter

__all__ = [
    "EVENTS",
    "FLOWS",
    "MANIFEST",
    "POLICIES",
    "READABLE_SESSION_VERSIONS",
    "SCREENSHOTS",
    "SESSION_FORMAT",
    "SESSION_FORMAT_VERSION",
    "TRACE",
    "SessionFormatError",
    "SessionRecorder",
]

SESSION_FORMAT = "pagewarden.session"
#: the version this pagewarden writes; `pagewarden.replay.load_session` reads the versions
#: in `READABLE_SESSION_VERSIONS`
SESSION_FORMAT_VERSION = 1
READABLE_SESSION_VERSIONS = (1,)

MANIFEST = "manifest.json"
POLICIES = "policies.yaml"
TRACE = "trace.jsonl"
EVENTS = "events.jsonl"
SCREENSHOTS = "screenshots"
FLOWS = "flows.mitm"


class SessionFormatError(ValueError):
    """A recorded session directory that cannot be read (says which file and why)."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


class SessionRecorder:
    """Writes a recorded session directory for one `Guard` (created by ``Guard(record=DIR)``).

    The manifest is written when recording starts (a crashed run still has one) and again by
    `close`. `flows_path` is where the network layer writes its flows; it is listed in the
    manifest when the file exists at close.
    """

    def __init__(self, directory: str | Path, guard: Any, user_policies: Any, *, screenshots: bool) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        if (self.directory / MANIFEST).exists() or (self.directory / TRACE).exists():
            raise FileExistsError(
                f"{self.directory} already holds a recorded session; record into a new directory"
            )
        self.guard = guard
        self.created = _now()
        self.flows_path = self.directory / FLOWS
        self.screenshots = screenshots
        if screenshots:
            (self.directory / SCREENSHOTS).mkdir(exist_ok=True)
        self.trace = TraceWriter(
            self.directory / TRACE,
            guard.secrets,
            artefacts=self.directory / SCREENSHOTS if screenshots else None,
        )
        self._events_lock = threading.Lock()
        self._events = (self.directory / EVENTS).open("a", encoding="utf-8")
        self._sessions: list[str] = []
        self._closed = False
        redact = step_redactor(None, guard.secrets)
        policies = redact_tree(user_policies.to_dict(), redact)
        (self.directory / POLICIES).write_text(
            yaml.safe_dump(policies, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        self.unsubscribe = guard.subscribe(self._on_event)
        self.write_manifest()

    # -- events -------------------------------------------------------------------------------
    def _on_event(self, event: Any) -> None:
        """Steps go to the trace; every other event to events.jsonl (already redacted)."""
        if event.session and event.session not in self._sessions:
            self._sessions.append(event.session)
        if event.kind == "step":
            return
        line = json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)
        with self._events_lock:
            if not self._events.closed:
                self._events.write(line + "\n")
                self._events.flush()

    # -- manifest -----------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """The guard's configuration as recorded (no key, no secret)."""
        guard = self.guard
        semantic = guard.semantic
        llm = None
        if semantic is not None:
            cfg = semantic.client.config
            llm = {"model": cfg.model, "base_url": cfg.base_url, "cascade": _jsonable(semantic.options)}
        return {
            "baseline": guard.baseline,
            "thresholds": _jsonable(guard.thresholds),
            "snapshot": guard.snapshot,
            "screenshots": self.screenshots,
            "llm": llm,
        }

    def manifest(self) -> dict[str, Any]:
        """The manifest as it stands."""
        files: dict[str, str] = {"trace": TRACE, "policies": POLICIES, "events": EVENTS}
        if self.screenshots:
            files["screenshots"] = SCREENSHOTS + "/"
        if self.flows_path.exists():
            files["flows"] = FLOWS
        sessions = list(self._sessions)
        if self.guard.session_id not in sessions:
            sessions.append(self.guard.session_id)
        redact = step_redactor(None, self.guard.secrets)
        return {
            "format": SESSION_FORMAT,
            "format_version": SESSION_FORMAT_VERSION,
            "trace_format_version": TRACE_FORMAT_VERSION,
            "pagewarden": __version__,
            "created": self.created,
            "closed": _now() if self._closed else None,
            "goal": redact(self.guard.goal) if self.guard.goal else None,
            "mode": self.guard.mode,
            "agent": redact(self.guard.agent_name) if getattr(self.guard, "agent_name", None) else None,
            "sessions": sessions,
            "steps": self._count_steps(),
            "config": redact_tree(self.config(), redact),
            "files": files,
        }

    def _count_steps(self) -> int:
        try:
            with (self.directory / TRACE).open(encoding="utf-8") as handle:
                return sum(1 for line in handle if line.strip())
        except OSError:
            return 0

    def write_manifest(self) -> None:
        """(Re)write manifest.json atomically."""
        text = json.dumps(self.manifest(), indent=2, ensure_ascii=False, default=str) + "\n"
        _write_atomic(self.directory / MANIFEST, text)

    def close(self) -> None:
        """Stop recording: close the files and write the final manifest (idempotent)."""
        if self._closed:
            return
        self.unsubscribe()
        self.trace.close()
        with self._events_lock:
            self._events.close()
        self._closed = True
        self.write_manifest()
