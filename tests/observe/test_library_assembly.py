"""The facts reader is assembled from its modules deterministically and completely: every module
file once, in the fixed order, none left over; each top-level name declared once; the built-ins
captured in `primitives.js` only; the modules shipped as package data. In real Chromium, the
assembled script defines no global but the one the guard names, and keeps reading through its
captured built-ins after the page patched the prototypes."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest
from playwright.async_api import Page

from pagewarden.observe._gather import install_script
from pagewarden.observe._library import MODULES, assemble, library, module_source
from pagewarden.testing import LocalSite, Response

ROOT = Path(__file__).resolve().parents[2]
DECLARATION = re.compile(r"^(?:function\s+([A-Za-z_$][\w$]*)|(?:const|let)\s+(.+?)\s*=)", re.M)


def module_files() -> list[str]:
    folder = resources.files("pagewarden.observe").joinpath("js")
    return sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".js"))


def top_level_names(source: str) -> list[str]:
    """Names a module declares at its top level (column 0): functions, and each `const`/`let`
    binding of a declaration (`const a = 1, b = 2` declares both)."""
    names = []
    for match in DECLARATION.finditer(source):
        if match.group(1):
            names.append(match.group(1))
            continue
        line = source[match.start() : source.index("\n", match.start())]
        names += re.findall(r"(?:^(?:const|let)\s+|,\s*)([A-Za-z_$][\w$]*)\s*=(?!=|>)", line)
    return names


def test_every_module_file_is_assembled_once_in_order() -> None:
    assert module_files() == sorted(MODULES), "a module file not assembled, or one listed but missing"
    assert len(set(MODULES)) == len(MODULES)
    script = library()
    markers = re.findall(r"^// -- js/(\S+)$", script, re.M)
    assert markers == list(MODULES)
    at = 0
    for name in MODULES:
        found = script.index(module_source(name), at)
        assert found >= at
        at = found + len(module_source(name))
    assert MODULES[0] == "primitives.js" and MODULES[-1] == "entry.js"


def test_assembly_is_deterministic_and_cached() -> None:
    assert assemble() == assemble() == library()
    assert library() is library()  # read and joined once per process
    assert "internals" not in library()
    assert library().startswith("// pagewarden's facts reader")
    assert library().rstrip().endswith("return library;\n}")


def test_each_top_level_name_is_declared_once() -> None:
    # Duplicate `const`s would fail to parse, but a duplicate `function` silently replaces the
    # first one in the same scope.
    names = Counter(name for module in MODULES for name in top_level_names(module_source(module)))
    assert names["hiddenReason"] == 1 and names["innerW"] == 1 and names["innerH"] == 1
    assert [name for name, n in names.items() if n > 1] == []
    assert len(names) > 300


def test_built_ins_are_captured_in_the_first_module_only() -> None:
    for name in MODULES[1:]:
        assert "prototype" not in module_source(name), f"{name} reads a prototype: capture it first"
    assert "uncurry(" not in "".join(module_source(name) for name in MODULES[1:])
    primitives = module_source("primitives.js")
    assert "const getAttr = uncurry(EP.getAttribute);" in primitives


def test_internals_are_checked_names() -> None:
    with pytest.raises(ValueError):
        assemble(["hiddenReason); alert(1"])
    with pytest.raises(ValueError):
        module_source("../_gather.py")
    exposed = assemble(["hiddenReason"])
    assert "get hiddenReason() { return hiddenReason; }" in exposed
    assert exposed.startswith(library()[: library().index("return library;")])


def test_the_modules_ship_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["pagewarden.observe"]
    for name in MODULES:
        assert any(fnmatch.fnmatch(f"js/{name}", p) for p in patterns), f"js/{name} is not package data"
        assert resources.files("pagewarden.observe").joinpath("js", name).is_file()


@pytest.mark.browser
async def test_the_installed_reader_adds_one_hidden_global_and_keeps_its_built_ins(
    page: Page, site: LocalSite
) -> None:
    body = (
        "<!doctype html><title>patched</title><a id=go href='https://bank.test/pay'>Pay</a>"
        "<input id=f aria-label='Card number'>"
        "<script>Element.prototype.getAttribute = () => 'https://app.test/safe';"
        "Node.prototype.contains = () => true;"
        "window.getComputedStyle = () => ({getPropertyValue: () => 'none'});"
        "Object.defineProperty(Node.prototype, 'textContent', {get: () => 'nothing here'});</script>"
    )
    site.route("app.test", "/patched", lambda _r: Response(body))
    names = "() => Object.getOwnPropertyNames(window)"
    await page.goto("http://app.test/patched")
    without = set(await page.evaluate(names))
    await page.add_init_script(install_script("__pwFactsTest"))
    await page.reload()
    added = set(await page.evaluate(names)) - without
    assert added == {"__pwFactsTest"}  # the modules' names stay inside the one function
    own = await page.evaluate(
        "() => { const d = Object.getOwnPropertyDescriptor(window, '__pwFactsTest');"
        " return [typeof __pwLibrary, d.enumerable, d.configurable, d.writable,"
        " Object.keys(window).includes('__pwFactsTest')]; }"
    )
    assert own == ["undefined", False, False, False, False]
    link = await page.evaluate("() => __pwFactsTest.facts(document.getElementById('go'), {})")
    assert link["href"] == "https://bank.test/pay"  # not the patched getAttribute's answer
    assert link["visible"] is True and link["hidden_reason"] is None  # not the patched style
    assert link["text"] == "Pay"
    field = await page.evaluate("() => __pwFactsTest.facts(document.getElementById('f'), {})")
    assert field["name"] == "Card number"
