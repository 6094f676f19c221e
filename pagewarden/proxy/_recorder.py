"""`Recorder`: every flow through the proxy, saved in mitmproxy's flow format.

A recorded session directory (`Guard(record=DIR)`) gets them in ``DIR/flows.mitm``; they are
readable by ``mitmproxy -r``, ``mitmweb``, `mitmproxy.io.FlowReader` and `Replay`. Each flow
carries, in its metadata, ``pagewarden_step`` (the index of the guarded step that ran last
when the request left: the action that caused it, where known) and, for a refused request,
``pagewarden_refusal``. Registered secrets and passwords typed in the session are redacted
from the saved copy (URL, headers, text bodies, websocket messages) as from traces.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mitmproxy import http, io

__all__ = ["Recorder"]


def _redact_message(message: http.Message, redact: Callable[[str], str]) -> None:
    for key, value in list(message.headers.items(multi=True)):
        clean = redact(value)
        if clean != value:
            message.headers.set_all(key, [redact(v) for v in message.headers.get_all(key)])
    if message.raw_content:
        text = message.get_text(strict=False)
        if text is not None:
            clean = redact(text)
            if clean != text:
                message.text = clean


class Recorder:
    """mitmproxy addon: append every finished flow to the file named by the option
    ``pagewarden_record`` (or the `path` given here), flushing each one.

    `redact` (text → text) is applied to the saved copy; `step_of(flow)` names the guarded
    step a request belongs to.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        redact: Callable[[str], str] | None = None,
        step_of: Callable[[http.HTTPFlow], int | None] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.redact = redact
        self.step_of = step_of
        self._file: IO[bytes] | None = None
        self._writer: Any = None
        self.count = 0

    def load(self, loader) -> None:
        loader.add_option("pagewarden_record", str, "", "Save every flow to this file (mitmproxy's format).")

    def configure(self, updated: set[str]) -> None:
        from mitmproxy import ctx

        if "pagewarden_record" in updated and ctx.options.pagewarden_record:
            self.path = Path(ctx.options.pagewarden_record)
        if self.path is not None and self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")
            self._writer = io.FlowWriter(self._file)

    def request(self, flow: http.HTTPFlow) -> None:
        if self.step_of is not None and "pagewarden_step" not in flow.metadata:
            step = self.step_of(flow)
            if step is not None:
                flow.metadata["pagewarden_step"] = step

    def _save(self, flow: http.HTTPFlow) -> None:
        if self._writer is None:
            return
        saved = flow.copy()
        saved.metadata.pop("pagewarden_session", None)  # the session's token stays in memory
        if self.redact is not None:
            url = self.redact(saved.request.url)
            if url != saved.request.url:
                saved.request.url = url
            _redact_message(saved.request, self.redact)
            if saved.response is not None:
                _redact_message(saved.response, self.redact)
            if saved.websocket is not None:
                for message in saved.websocket.messages:
                    if message.is_text:
                        clean = self.redact(message.text)
                        if clean != message.text:
                            message.text = clean
        self._writer.add(saved)
        self._file.flush()  # type: ignore[union-attr]
        self.count += 1

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None and flow.response.status_code == 101:
            return  # a websocket: saved with its messages when it ends
        self._save(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._save(flow)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._save(flow)

    def done(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
            self._writer = None
