"""`Replay`: serve a recorded session from its flows, with no origin server.

A request is answered with the recorded response of the same method and URL (scheme, host,
port, path and query); when one URL was recorded several times, the responses are served in
the recorded order, the last one again afterwards. A POST matches on its body too when the
recording has one with the same body. A request that was not recorded gets a clear error
(``502``, header ``X-Pagewarden-Replay: miss``, a page naming the request) and never goes
upstream. The egress rules still run before it (the chain is the same as when recording).
"""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path

from mitmproxy import http, io

__all__ = ["REPLAY_HEADER", "Replay", "flows_file"]

REPLAY_HEADER = "X-Pagewarden-Replay"


def flows_file(path: str | Path) -> Path:
    """The flows file of a recorded session directory (``DIR/flows.mitm``), or `path` itself."""
    path = Path(path)
    return path / "flows.mitm" if path.is_dir() else path


def _key(request: http.Request) -> tuple[str, str]:
    return request.method.upper(), request.url


class Replay:
    """mitmproxy addon: answer every request from the flows file named by the option
    ``pagewarden_replay`` (or the `path` given here)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = flows_file(path) if path is not None else None
        self._responses: dict[tuple[str, str], list[http.HTTPFlow]] = defaultdict(list)
        self._served: dict[tuple[str, str], int] = defaultdict(int)
        self.misses: list[str] = []
        self.loaded = 0

    def load(self, loader) -> None:
        loader.add_option(
            "pagewarden_replay", str, "", "Serve responses from this flows file (or session directory)."
        )

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        if "pagewarden_replay" in updated and ctx.options.pagewarden_replay:
            self.path = flows_file(ctx.options.pagewarden_replay)
        if self.path is not None and not self.loaded:
            from mitmproxy.exceptions import OptionsError

            try:
                self.read(self.path)
            except (OSError, ValueError) as exc:  # a clear error, not a proxy serving nothing
                raise OptionsError(str(exc)) from exc

    @property
    def active(self) -> bool:
        """Whether a recording is being served."""
        return self.path is not None

    def read(self, path: Path) -> None:
        """Load the recorded flows (a missing or unreadable file is a clear error)."""
        if not path.is_file():
            raise FileNotFoundError(f"no recorded flows at {path}")
        with path.open("rb") as handle:
            for flow in io.FlowReader(handle).stream():
                if isinstance(flow, http.HTTPFlow) and flow.response is not None:
                    self._responses[_key(flow.request)].append(flow)
                    self.loaded += 1

    def _match(self, request: http.Request) -> http.HTTPFlow | None:
        key = _key(request)
        candidates = self._responses.get(key)
        if not candidates:
            return None
        if request.raw_content:
            same_body = [f for f in candidates if f.request.raw_content == request.raw_content]
            if same_body:
                candidates = same_body
        index = self._served[key]
        self._served[key] = index + 1
        return candidates[min(index, len(candidates) - 1)]

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or not self.active:
            return
        recorded = self._match(flow.request)
        if recorded is None:
            self.misses.append(f"{flow.request.method} {flow.request.url}")
            what = html.escape(f"{flow.request.method} {flow.request.url[:300]}")
            body = (
                "<!doctype html><html><head><meta charset='utf-8'><link rel='icon' href='data:,'>"
                "<title>Not in the recording</title></head><body><h1>Not in the recording</h1>"
                f"<p>pagewarden replay has no recorded response for <code>{what}</code>; "
                "nothing was sent to the origin.</p></body></html>"
            )
            flow.response = http.Response.make(
                502, body, {"Content-Type": "text/html; charset=utf-8", REPLAY_HEADER: "miss"}
            )
            return
        response = recorded.response.copy()  # type: ignore[union-attr]
        response.headers[REPLAY_HEADER] = "hit"
        flow.response = response
        flow.metadata["pagewarden_replayed"] = True
