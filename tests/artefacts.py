"""Scanning what a run wrote (traces, logs, reports, results) for secrets in clear."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pagewarden.secrets import SecretRegistry

#: Files a guarded run writes: traces and JSON logs (``.jsonl``), logs, reports, results.
ARTEFACT_SUFFIXES = frozenset({".jsonl", ".log", ".html"})
ARTEFACT_NAMES = frozenset({"results.json", "manifest.json"})


def artefacts(root: Path) -> list[Path]:
    """The trace, log, report and results files under `root` (inputs such as policy files
    and hand-written step files are not artefacts and may hold secrets on purpose)."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and (p.suffix in ARTEFACT_SUFFIXES or p.name in ARTEFACT_NAMES)
    )


def leaks(files: Iterable[Path], registry: SecretRegistry) -> list[str]:
    """``"file: label"`` for every file that holds a registered value (in any of the encodings
    the registry knows) in clear; never the value itself."""
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        redacted = registry.redact(text)
        if redacted != text:
            labels = sorted({s.label for s in registry if s.value in text} or {"an encoded value"})
            found.append(f"{path}: {', '.join(labels)}")
    return found
