"""An on-disk cache of model answers, keyed by model + exact prompt + schema.

Replays and evaluations send the same prompts again; a hit returns the stored answer text
(parsed again, so a schema change is noticed) without calling the endpoint. One JSON file
per answer, written atomically, so several processes can share a directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["ResponseCache", "cache_key"]

_FORMAT = 1


def cache_key(model: str, messages: list[dict[str, Any]], schema: dict[str, Any] | None, **extra: Any) -> str:
    """A stable hex key for one request."""
    payload = json.dumps(
        {"v": _FORMAT, "model": model, "messages": messages, "schema": schema, **extra},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers stored as ``DIR/ab/abcdef….json``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (a missing or corrupt file is a miss)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("text"), str) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store `entry` (must hold ``text``); failures to write are ignored (a cache is optional)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except OSError:
            return
