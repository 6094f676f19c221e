"""MkDocs hooks: the reference pages that the code is the source of truth for.

* `<!-- generated:rule-reference -->` becomes the rule kinds' field table, from the same pydantic
  models the policy loader validates with (`pagewarden.policies.reference_markdown()`).
* `<!-- generated:llm-env -->` becomes the table of the model's environment variables, from
  `pagewarden.llm.ENV_VARS` (what `LLMConfig.from_env()` reads).
* `<!-- generated:changelog -->` becomes CHANGELOG.md (one file, shown in both places).
* Every `PAGEWARDEN_*` variable the package reads must be named on the environment page: the
  build fails (an error under `mkdocs build --strict`) when one is missing.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.pagewarden")

ROOT = Path(__file__).resolve().parent
MARKERS = {
    "<!-- generated:rule-reference -->": "rule_reference",
    "<!-- generated:llm-env -->": "llm_env",
    "<!-- generated:changelog -->": "changelog",
}
ENV_PAGE = "reference/environment.md"
_ENV_NAME = re.compile(r"\bPAGEWARDEN_[A-Z0-9_]*[A-Z0-9]\b")


def rule_reference() -> str:
    """The rule kinds and their fields, as the loader's schema states them."""
    from pagewarden.policies import reference_markdown

    return reference_markdown()


def llm_env() -> str:
    """The model's environment variables, from `pagewarden.llm.ENV_VARS`."""
    from pagewarden.llm import ENV_VARS

    rows = ["| variable | sets |", "|---|---|"]
    rows += [f"| `{name}` | {meaning} |" for name, meaning in ENV_VARS.items()]
    return "\n".join(rows) + "\n"


def changelog() -> str:
    """CHANGELOG.md without its title, its links to `docs/…` made relative to the docs root."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    text = text.split("\n", 1)[1] if text.startswith("# ") else text
    return text.replace("](docs/", "](")


def variables_read_by_code(package: Path = ROOT / "pagewarden") -> set[str]:
    """Every `PAGEWARDEN_*` name written in the package's source (prefixes like `PAGEWARDEN_LLM_*`
    excluded: they end in `_`)."""
    names: set[str] = set()
    for path in package.rglob("*.py"):
        names.update(_ENV_NAME.findall(path.read_text(encoding="utf-8")))
    return names


def render(markdown: str) -> str:
    """`markdown` with every generated marker replaced by its content."""
    for marker, name in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, globals()[name]())
    return markdown


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    markdown = render(markdown)
    if page.file.src_uri == ENV_PAGE:
        missing = sorted(name for name in variables_read_by_code() if name not in markdown)
        if missing:
            log.error("%s does not document %s, which the code reads", ENV_PAGE, ", ".join(missing))
    return markdown
