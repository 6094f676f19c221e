"""Recorded sessions read back: `load_session` reads a directory `Guard(record=DIR)` wrote
(or a bare directory holding only a ``trace.jsonl``) and refuses, saying why, a manifest it
does not understand."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagewarden._version import __version__
from pagewarden.trace import (
    MANIFEST,
    READABLE_SESSION_VERSIONS,
    SESSION_FORMAT,
    TRACE,
    TRACE_FORMAT_VERSION,
    SessionFormatError,
)

__all__ = ["RecordedSession", "load_session", "read_records"]


@dataclass
class RecordedSession:
    """A recorded session directory, read back.

    `records` are the raw trace lines (dicts) in file order; `policies` the recorded user
    policies (None for a bare trace directory, which has none).
    """

    path: Path
    manifest: dict[str, Any]
    format_version: int
    records: list[dict[str, Any]]
    policies: Any = None
    notes: list[str] = field(default_factory=list)

    @property
    def config(self) -> dict[str, Any]:
        """The recorded configuration (empty for a bare trace directory)."""
        config = self.manifest.get("config")
        return config if isinstance(config, dict) else {}

    @property
    def goal(self) -> str | None:
        goal = self.manifest.get("goal")
        return goal if isinstance(goal, str) else None

    @property
    def mode(self) -> str:
        return "monitor" if self.manifest.get("mode") == "monitor" else "enforce"

    def file(self, role: str) -> Path | None:
        """The path of a listed file (``trace``, ``policies``, ``events``, ``flows`` …), or None."""
        name = (self.manifest.get("files") or {}).get(role)
        return self.path / name if isinstance(name, str) else None


def read_records(path: Path) -> list[dict[str, Any]]:
    """Raw trace lines of `path`; a malformed line raises `SessionFormatError` with its number."""
    records: list[dict[str, Any]] = []
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        try:
            lines = list(handle)
        except UnicodeDecodeError as exc:
            raise SessionFormatError(f"{path}: not UTF-8 text ({exc.reason})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SessionFormatError(f"{path}:{number}: not JSON: {exc.msg}") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("step"), dict):
            raise SessionFormatError(f"{path}:{number}: not a trace line (no 'step' object)")
        version = raw.get("v", TRACE_FORMAT_VERSION)
        if not isinstance(version, int) or version > TRACE_FORMAT_VERSION:
            raise SessionFormatError(
                f"{path}:{number}: trace line format version {version!r}; this pagewarden "
                f"({__version__}) reads versions up to {TRACE_FORMAT_VERSION}: upgrade pagewarden"
            )
        raw["_line"] = number
        records.append(raw)
    return records


def load_session(directory: str | Path) -> RecordedSession:
    """Read a recorded session directory; `SessionFormatError` says what is wrong with it."""
    from pagewarden.policies import PolicyError, PolicySet

    path = Path(directory)
    if not path.is_dir():
        raise SessionFormatError(f"{path}: not a directory (a recorded session is a directory)")
    manifest_path = path / MANIFEST
    if not manifest_path.exists():
        trace = path / TRACE
        if not trace.exists():
            raise SessionFormatError(f"{path}: no {MANIFEST} and no {TRACE}: not a recorded session")
        return RecordedSession(
            path, {"files": {"trace": TRACE}}, 0, read_records(trace),
            notes=[f"no {MANIFEST}: read as a bare trace directory (no policies or configuration recorded)"],
        )  # fmt: skip
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SessionFormatError(f"{manifest_path}: corrupt manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != SESSION_FORMAT:
        raise SessionFormatError(
            f"{manifest_path}: not a pagewarden session manifest (format must be {SESSION_FORMAT!r})"
        )
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionFormatError(
            f"{manifest_path}: corrupt manifest: format_version {version!r} is not an integer"
        )
    if version not in READABLE_SESSION_VERSIONS:
        writer = manifest.get("pagewarden", "an unknown version")
        if version > max(READABLE_SESSION_VERSIONS):
            advice = "upgrade pagewarden to read it"
        else:
            advice = "no reader for this older format is left; re-record the session"
        raise SessionFormatError(
            f"{path}: session format version {version} (written by pagewarden {writer}); this pagewarden "
            f"({__version__}) reads versions {', '.join(map(str, READABLE_SESSION_VERSIONS))}: {advice}"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or not isinstance(files.get("trace"), str):
        raise SessionFormatError(f"{manifest_path}: corrupt manifest: 'files' does not name the trace")
    session = RecordedSession(path, manifest, version, read_records(path / files["trace"]))
    policies = files.get("policies")
    if isinstance(policies, str):
        try:
            session.policies = PolicySet.load(path / policies)
        except PolicyError as exc:
            problems = "; ".join(str(p) for p in exc.problems)
            raise SessionFormatError(f"{path / policies}: recorded policies unreadable: {problems}") from None
    return session
