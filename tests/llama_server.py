"""A real llama.cpp server for compatibility tests (installed by `scripts/llama-server`).

`llama_base_url()` yields the API root of a running server: the one named by
PAGEWARDEN_LLAMA_BASE_URL, or one started here from the venv's llama-cpp-python and the
assembled Gemma 3 270M GGUF. The test is skipped, with the reason, when neither is there.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL = Path(sys.prefix) / "share" / "pagewarden" / "models" / "gemma-3-270m-q4_k_m.gguf"
MODEL_NAME = "gemma-3-270m"
INSTALL_HINT = (
    "run scripts/llama-server --install-only (about 5 min of CPU), or set PAGEWARDEN_LLAMA_BASE_URL"
)


def _answers(base_url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:
            return response.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def llama_base_url() -> Iterator[str]:
    """The API root of a llama.cpp server, started for the test when needed."""
    given = os.environ.get("PAGEWARDEN_LLAMA_BASE_URL")
    if given:
        if not _answers(given.rstrip("/")):
            pytest.skip(f"PAGEWARDEN_LLAMA_BASE_URL={given} does not answer")
        yield given.rstrip("/")
        return
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError:
        pytest.skip(f"llama.cpp server (llama-cpp-python) is not installed: {INSTALL_HINT}")
    if not MODEL.is_file():
        pytest.skip(f"the Gemma 3 270M GGUF is not assembled at {MODEL}: {INSTALL_HINT}")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(MODEL), "--model_alias", MODEL_NAME,
        "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
    ]  # fmt: skip
    # The server logs a lot: to a file, never to a pipe nobody reads (it would block when full).
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        deadline = time.monotonic() + 180
        while not _answers(base_url):
            if process.poll() is not None:
                log.seek(0)
                error = log.read().decode("utf-8", "replace")
                pytest.fail(f"llama.cpp server exited with {process.returncode}: {error[-800:]}")
            if time.monotonic() > deadline:
                pytest.fail("llama.cpp server did not answer within 180 s")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()
