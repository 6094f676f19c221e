"""Reading a source — a file path or an http(s) URL — into a `Document` by its type."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from pagewarden.policies.extract._documents import Document, ExtractionError
from pagewarden.policies.extract._html import read_html
from pagewarden.policies.extract._pdf import read_pdf
from pagewarden.policies.extract._text import markdown_blocks, text_blocks

__all__ = ["MAX_SOURCE_BYTES", "read_source"]

#: larger sources are refused rather than read into memory
MAX_SOURCE_BYTES = 64 * 1024 * 1024
_TIMEOUT_S = 30.0


def _kind(name: str, data: bytes, content_type: str = "") -> str:
    lower = name.lower().split("?", 1)[0]
    content_type = content_type.lower()
    if data[:5] == b"%PDF-" or lower.endswith(".pdf") or "application/pdf" in content_type:
        return "pdf"
    if lower.endswith((".md", ".markdown", ".mdown")) or "markdown" in content_type:
        return "markdown"
    if lower.endswith((".html", ".htm", ".xhtml")) or "html" in content_type:
        return "html"
    if lower.endswith((".txt", ".text")) or content_type.startswith("text/plain"):
        return "text"
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in head:
        return "html"
    return "text"


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for encoding in ("utf-8", "utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ("utf-8",):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace")


def _fetch(url: str) -> tuple[bytes, str, str]:
    request = urllib.request.Request(url, headers={"User-Agent": "pagewarden-policy-extractor"})
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
            data = response.read(MAX_SOURCE_BYTES + 1)
            return data, response.headers.get("Content-Type", ""), response.geturl()
    except urllib.error.HTTPError as exc:
        raise ExtractionError(url, f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ExtractionError(url, f"cannot fetch: {reason}") from None


def read_source(source: str | Path, progress=None) -> Document:
    """Read a PDF, HTML, Markdown or text file, or an http(s) URL, into a `Document`.

    `progress(done, total)` is called while a long source (PDF pages) is read. Raises
    `ExtractionError` (or `NoTextLayer`) with a clear message when it cannot."""
    name = str(source)
    content_type = ""
    base_url = None
    if isinstance(source, str) and source.lower().startswith(("http://", "https://")):
        data, content_type, base_url = _fetch(source)
    else:
        path = Path(source)
        try:
            if path.is_dir():
                raise ExtractionError(name, "is a directory, not a document")
            if path.stat().st_size > MAX_SOURCE_BYTES:
                raise ExtractionError(name, f"larger than {MAX_SOURCE_BYTES // 2**20} MiB")
            data = path.read_bytes()
        except FileNotFoundError:
            raise ExtractionError(name, "file not found") from None
        except OSError as exc:
            raise ExtractionError(name, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise ExtractionError(name, f"larger than {MAX_SOURCE_BYTES // 2**20} MiB")
    if not data.strip():
        raise ExtractionError(name, "the document is empty")
    kind = _kind(name, data, content_type)
    if kind == "pdf":
        document = read_pdf(data, name, progress)
    elif kind == "html":
        document = read_html(data, name, base_url)
    elif kind == "markdown":
        document = Document(name, "markdown", blocks=markdown_blocks(_decode(data)))
    else:
        document = Document(name, "text", blocks=text_blocks(_decode(data)))
    if not document.blocks:
        raise ExtractionError(name, f"no text found in this {kind} document")
    return document
