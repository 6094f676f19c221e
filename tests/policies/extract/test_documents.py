"""Readers: PDF (page numbers, no text layer, damage), HTML main content, Markdown, text, URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagewarden.policies.extract import ExtractionError, NoTextLayer, read_source
from pagewarden.testing import LocalSite
from tests.policies.extract.handbooks import HTML, MARKDOWN, TEXT
from tests.policies.extract.pdfkit import pdf_bytes


def _texts(document, kind=None):
    return [b.text for b in document.blocks if kind is None or b.kind == kind]


def test_pdf_text_per_page_with_headings_and_joined_lines(tmp_path: Path) -> None:
    path = tmp_path / "handbook.pdf"
    path.write_bytes(
        pdf_bytes(
            [
                ["1. Browsing", "Never visit the admin console at /admin. Agents must not",
                 "share passwords."],
                ["2. Approvals", "- Always ask the user before deleting a", "  repository.",
                 "- Never merge."],
            ]
        )
    )
    doc = read_source(path)
    assert doc.kind == "pdf" and doc.pages == 2
    headings = [(b.text, b.page) for b in doc.blocks if b.kind == "heading"]
    assert headings == [("1. Browsing", 1), ("2. Approvals", 2)]
    paragraph = next(b for b in doc.blocks if b.kind == "paragraph")
    assert paragraph.text == "Never visit the admin console at /admin. Agents must not share passwords."
    assert paragraph.page == 1 and paragraph.section == "1. Browsing"
    items = [(b.text, b.page) for b in doc.blocks if b.kind == "item"]
    assert items == [("Always ask the user before deleting a repository.", 2), ("Never merge.", 2)]


def test_pdf_without_text_layer_is_reported_as_such(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdf_bytes(image_pages=3))
    with pytest.raises(NoTextLayer, match="no text layer") as info:
        read_source(path)
    assert "OCR" in str(info.value) and "3 page" in str(info.value)


def test_pdf_with_some_image_pages_warns(tmp_path: Path) -> None:
    path = tmp_path / "mixed.pdf"
    path.write_bytes(pdf_bytes([["Agents must never visit /admin."]], image_pages=2))
    doc = read_source(path)
    assert any("pages without text" in w and "2-3" in w for w in doc.warnings)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"%PDF-1.4\n garbage that is not a pdf", "not a readable PDF"),
        (pdf_bytes([["Agents must never visit /admin."]])[:200], "not a readable PDF"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(ExtractionError, match=message):
        read_source(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ExtractionError, match="file not found"):
        read_source(tmp_path / "nope.pdf")
    with pytest.raises(ExtractionError, match="directory"):
        read_source(tmp_path)


def test_html_main_content_only_headings_as_context() -> None:
    from pagewarden.policies.extract._html import read_html

    doc = read_html(HTML, "policy.html")
    text = " ".join(_texts(doc))
    dropped = ("nav-trap", "cookies", "log in", "copy this page", "ads", "hidden-trap", "Hidden paragraph",
               "run this script", ".x{")  # fmt: skip
    for boilerplate in dropped:
        assert boilerplate not in text
    headings = _texts(doc, "heading")
    assert headings[:3] == ["Web policy for automated agents", "Restricted pages", "Approved sites"]
    salary = next(b for b in doc.blocks if "salary" in b.text)
    assert salary.section == "Web policy for automated agents > Restricted pages"
    assert "(https://intranet.acme.test/hr/salaries)" in salary.text  # the link's target is kept
    assert "Purchases: Always confirm" in text  # table cells read as one row


def test_html_without_main_uses_body_and_drops_role_navigation() -> None:
    from pagewarden.policies.extract._html import read_html

    page = (
        "<html><body><div role='navigation'>You must click here</div>"
        "<div class='content'><h3>Rules</h3><p>Never open /admin.</p></div></body></html>"
    )
    doc = read_html(page, "p.html")
    assert _texts(doc) == ["Rules", "Never open /admin."]


def test_markdown_structure_links_and_code() -> None:
    from pagewarden.policies.extract._text import markdown_blocks

    blocks = markdown_blocks(MARKDOWN + "\nRead [the rules](https://docs.acme.test/rules) first.\n")
    texts = [b.text for b in blocks]
    assert "Acme Corp — Handbook for AI web agents" in texts
    assert not any("code blocks" in t for t in texts)
    assert not any("title: Agent handbook" in t for t in texts)
    assert "Customer credit card numbers must not be typed into any form." in texts
    assert "Read the rules (https://docs.acme.test/rules) first." in texts
    item = next(b for b in blocks if b.text.startswith("Never share passwords"))
    assert item.kind == "item" and item.section.endswith("2. Data handling")


def test_plain_text_caps_heading() -> None:
    from pagewarden.policies.extract._text import text_blocks

    blocks = text_blocks(TEXT + "\nDeletion rules\n--------------\nNever delete backups.\n")
    assert [b.text for b in blocks if b.kind == "heading"] == ["ACCEPTABLE USE", "Deletion rules"]
    assert blocks[-1].section == "Deletion rules"


def test_url_source_html_and_pdf() -> None:
    from pagewarden.testing import Response

    pdf = pdf_bytes([["Agents must never visit /admin."]])
    with LocalSite() as site:
        site.route("*", "/policy", lambda request: Response(HTML))
        site.route("*", "/handbook", lambda request: Response(pdf, content_type="application/pdf"))
        root = f"http://127.0.0.1:{site.port}"
        html_doc = read_source(f"{root}/policy")
        pdf_doc = read_source(f"{root}/handbook")
        with pytest.raises(ExtractionError, match="404"):
            read_source(f"{root}/missing")
    assert html_doc.kind == "html" and any("salary" in t for t in _texts(html_doc))
    assert pdf_doc.kind == "pdf" and pdf_doc.blocks[0].page == 1
