"""PDF: the text layer of each page (pypdf), page numbers kept for provenance."""

from __future__ import annotations

import io
import logging

from pagewarden.policies.extract._documents import Document, ExtractionError, NoTextLayer, SectionTracker
from pagewarden.policies.extract._text import blocks_from_lines

__all__ = ["read_pdf"]

#: pages with fewer letters than this count as having no text
_MIN_LETTERS = 3


def read_pdf(data: bytes, name: str, progress=None) -> Document:
    """A `Document` from PDF bytes; `progress(done, total)` is called after each page.

    Raises `NoTextLayer` when no page has text (a scanned document needs OCR first) and
    `ExtractionError` for a file pypdf cannot read (damaged, encrypted with a password)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are about the file, not us
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError(name, "the PDF is encrypted with a password")
        pages = list(reader.pages)
    except ExtractionError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError, IndexError) as exc:
        raise ExtractionError(name, f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    document = Document(name, "pdf", pages=len(pages))
    tracker = SectionTracker()
    lines: list[tuple[str, int | None]] = []
    empty_pages = []
    for number, page in enumerate(pages, 1):
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on damaged pages
            document.warnings.append(f"page {number}: text could not be read ({type(exc).__name__})")
            text = ""
        if sum(ch.isalpha() for ch in text) < _MIN_LETTERS:
            empty_pages.append(number)
        lines.extend((line, number) for line in text.splitlines())
        lines.append(("", number))
        if progress is not None:
            progress(number, len(pages))
    if not pages:
        raise ExtractionError(name, "the PDF has no pages")
    if len(empty_pages) == len(pages):
        raise NoTextLayer(
            name,
            f"the PDF has no text layer ({len(pages)} page(s) of images only?): run OCR on it first "
            "(e.g. ocrmypdf); no policies could be read",
        )
    if empty_pages:
        document.warnings.append(f"pages without text (images only?): {_ranges(empty_pages)}")
    document.blocks = blocks_from_lines(lines, tracker)
    return document


def _ranges(numbers: list[int]) -> str:
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)
