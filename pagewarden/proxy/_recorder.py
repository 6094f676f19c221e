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
import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mitmproxy import http
from mitmproxy.io import tnetstring

__all__ = ["Recorder"]

_log = logging.getLogger("pagewarden.proxy")
#: The writer waits for this long without a new flow before writing (or for BATCH_LIMIT flows).
QUIET_SECONDS = 0.15
BATCH_LIMIT = 100
_PLAIN_CHARSETS = ("utf-8", "utf8", "us-ascii", "ascii")


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


def _redact_flow(saved: http.HTTPFlow, redact: Callable[[str], str]) -> None:
    url = redact(saved.request.url)
    if url != saved.request.url:
        saved.request.url = url
    _redact_message(saved.request, redact)
    if saved.response is not None:
        _redact_message(saved.response, redact)
    if saved.websocket is not None:
        for message in saved.websocket.messages:
            if message.is_text:
                clean = redact(message.text)
                if clean != message.text:
                    message.text = clean


def _needs_redaction(blob: bytes, state: dict[str, Any], redact: Callable[[str], str]) -> bool:
    """Whether the serialised flow may hold a secret: one spelled out in it, or a body the
    raw bytes do not show as text (compressed, or in another charset)."""
    text = blob.decode("utf-8", "replace")
    if redact(text) != text:
        return True
    for part in ("request", "response"):
        message = state.get(part) or {}
        for key, value in message.get("headers") or ():
            name = key.lower()
            if name == b"content-encoding" and value.strip().lower() not in (b"", b"identity"):
                return True
            if name == b"content-type" and b"charset=" in value.lower():
                charset = value.lower().split(b"charset=", 1)[1].split(b";")[0].strip(b" \"'")
                if charset.decode("latin-1") not in _PLAIN_CHARSETS:
                    return True
    return False


class Recorder:
    """mitmproxy addon: append every finished flow to the file named by the option
    ``pagewarden_record`` (or the `path` given here).

    `redact` (text → text) is applied to the saved copy; `step_of(flow)` names the guarded
    step a request belongs to.

    The hook only queues the finished flow: its snapshot (``get_state``), redaction,
    serialisation and the write happen on a writer thread, off the path of the response to
    the browser, in batches once traffic pauses for `QUIET_SECONDS` (recording each flow on
    the proxy's loop made a page with 50 sub-resources load ~1.6× slower; a writer working
    during the load still cost ~1.4×). `flush()` waits until everything handed over is in
    the file; `done` (the proxy's shutdown) writes everything still queued.
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
        self._queue: queue.Queue[http.HTTPFlow | None] = queue.Queue()
        self._thread: threading.Thread | None = None
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
            self._thread = threading.Thread(target=self._drain, name="pagewarden-recorder", daemon=True)
            self._thread.start()

    def request(self, flow: http.HTTPFlow) -> None:
        if self.step_of is not None and "pagewarden_step" not in flow.metadata:
            step = self.step_of(flow)
            if step is not None:
                flow.metadata["pagewarden_step"] = step

    def _save(self, flow: http.HTTPFlow) -> None:
        if self._thread is None:
            return
        # The flow is finished (response, error, websocket end): the writer snapshots it
        # later, off the proxy's loop; nothing in the chain changes a finished flow.
        self._queue.put(flow)
        self.count += 1

    # -- the writer thread --------------------------------------------------------------------
    def _drain(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            # Wait for a quiet moment (the page has loaded): a thread working while the
            # proxy's loop answers requests costs the loop the GIL at every socket call.
            while batch[-1] is not None and len(batch) < BATCH_LIMIT:
                try:
                    batch.append(self._queue.get(timeout=QUIET_SECONDS))
                except queue.Empty:
                    break
            for flow in batch:
                if flow is None:
                    stop = True
                    continue
                try:
                    self._write(flow)
                except Exception as exc:  # noqa: BLE001 - one bad flow must not stop the recording
                    _log.warning("a flow could not be recorded: %s", type(exc).__name__)
            if self._file is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._file.flush()
            for _ in batch:
                self._queue.task_done()

    def _write(self, flow: http.HTTPFlow) -> None:
        state = flow.get_state()
        metadata = state.get("metadata") or {}
        metadata.pop("pagewarden_session", None)  # the session's token stays in memory
        blob = tnetstring.dumps(state)
        if self.redact is not None and _needs_redaction(blob, state, self.redact):
            saved = http.HTTPFlow.from_state(state)
            _redact_flow(saved, self.redact)
            blob = tnetstring.dumps(saved.get_state())
        assert self._file is not None
        self._file.write(blob)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every flow handed to the recorder is in the file (True), or `timeout`."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._queue.unfinished_tasks

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None and flow.response.status_code == 101:
            return  # a websocket: saved with its messages when it ends
        self._save(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._save(flow)

    def http_connect_error(self, flow: http.HTTPFlow) -> None:
        """A refused CONNECT (a blocked HTTPS host): saved with its 403 and refusal."""
        self.request(flow)
        self._save(flow)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._save(flow)

    def done(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(30)
            self._thread = None
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
