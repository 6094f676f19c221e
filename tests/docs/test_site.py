"""The docs site: the generated reference pages come from the code, the README stays a short
front page whose links all resolve. (`mkdocs build --strict` itself runs in scripts/test.)"""

from __future__ import annotations

import re

import docs_hooks  # mkdocs.yml's hooks, at the repository root (on sys.path: tests/ is a package)
from pagewarden.llm import ENV_VARS
from pagewarden.policies import reference_markdown
from tests.docs._examples import ROOT


def test_rule_reference_is_generated_from_the_schema() -> None:
    page = (ROOT / "docs" / "reference" / "rules.md").read_text(encoding="utf-8")
    assert "<!-- generated:rule-reference -->" in page
    rendered = docs_hooks.render(page)
    assert reference_markdown().strip() in rendered
    assert "`instruction_provenance` | `ugc_selectors`" in rendered


def test_environment_page_names_every_variable_the_code_reads() -> None:
    names = docs_hooks.variables_read_by_code()
    assert {"PAGEWARDEN_CHROMIUM", "PAGEWARDEN_CONFIG_DIR", "PAGEWARDEN_LLM_MODEL"} <= names
    page = docs_hooks.render((ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8"))
    assert not sorted(n for n in names if n not in page)
    for name in ENV_VARS:
        assert f"`{name}`" in page


def test_changelog_is_shown_in_the_site() -> None:
    page = docs_hooks.render((ROOT / "docs" / "changelog.md").read_text(encoding="utf-8"))
    assert "## [Unreleased]" in page and "](docs/" not in page


def test_readme_is_a_short_front_page_with_working_links() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "scripts/demo" in text and "scripts/test" in text
    targets = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#[^)]*)?\)", text)
    assert len(targets) >= 10
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, missing


def test_readme_reaches_each_task_in_one_click() -> None:
    """The six things a new user looks for are each one link away from the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in (
        "docs/guides/agent.md",  # guard a page
        "docs/guides/policies.md#allow-only-your-site",  # a policy allowing only their site
        "docs/getting-started/decisions.md",  # why an action was stopped
        "docs/guides/console.md",  # run the console
        "docs/guides/sessions.md",  # replay a session
        "docs/guides/semantic.md#a-local-model",  # use a local model
    ):
        assert f"]({page})" in text, page
