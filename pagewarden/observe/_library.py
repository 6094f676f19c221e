"""The facts reader's script, assembled from its modules in `observe/js/` at load time.

The reader is one function, `__pwLibrary()`, whose body is the modules in `MODULES` order: each
module is a run of declarations in that one scope (no globals, no bundler), the first
(`primitives.js`) capturing the built-ins every later module uses, the last (`entry.js`) defining
the frozen `library` the function returns. The script is read and joined once per process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources

__all__ = ["MODULES", "assemble", "library", "module_source"]

# The order is part of the script: a module's top-level initialisers may use only the modules
# before it (functions are hoisted; `const` and `let` are not).
MODULES: tuple[str, ...] = (
    "primitives.js",
    "dom.js",
    "user_content.js",
    "visibility.js",
    "names.js",
    "forms.js",
    "context.js",
    "hit_test.js",
    "activation.js",
    "overlays.js",
    "facts.js",
    "mutations.js",
    "sources.js",
    "pinning.js",
    "masking.js",
    "entry.js",
)

_HEAD = """\
// pagewarden's facts reader: what an element is, says, hides and leads to, read in the page
// just before an action. `__pwLibrary()` builds the reader from the DOM primitives it finds
// when it runs and keeps them: installed by an init script (before any page script), a page
// that later patches getComputedStyle, getAttribute, textContent, href … cannot make it lie.
// Used by observe/_gather.py; the entry points return plain JSON-able objects. Assembled by
// observe/_library.py from the modules in observe/js/.
function __pwLibrary() {
"use strict";
"""
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def module_source(name: str) -> str:
    """The text of one module of the reader (`name` as listed in `MODULES`)."""
    if name not in MODULES:
        raise ValueError(f"not a module of the facts reader: {name!r}")
    return resources.files("pagewarden.observe").joinpath("js", name).read_text("utf-8")


def assemble(internals: Sequence[str] = ()) -> str:
    """The reader's script: `function __pwLibrary() {...}` with every module in order.

    `internals` (for tests only) names functions and variables of the modules to expose, live, as
    getters of `__pwLibrary().internals`, so one module's logic can be checked on its own in a
    page; the script the guard injects (`library()`) exposes none.
    """
    for name in internals:
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"not an identifier: {name!r}")
    parts = [_HEAD]
    for name in MODULES:
        parts.append(f"// -- js/{name}\n{module_source(name)}")
    if internals:
        exposed = ", ".join(f"get {name}() {{ return {name}; }}" for name in internals)
        parts.append(f"return Object.freeze({{...library, internals: Object.freeze({{{exposed}}})}});\n}}\n")
    else:
        parts.append("return library;\n}\n")
    return "".join(parts)


@cache
def library() -> str:
    """The reader's script as the guard injects it (assembled once per process)."""
    return assemble()
