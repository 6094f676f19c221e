"""The policy agent's extraction: policies from PDF, HTML, Markdown and text documents.

`extract(sources)` reads the documents (`read_source`), finds policy statements (offline by
their wording, or with a model), compiles the rules they state plainly, keeps each policy's
provenance, reports text aimed at the extractor instead of obeying it, and merges the result
into an existing policy set without duplicating. `write_policy_file` writes it, keeping the
previous version of the file as ``FILE.rN``.
"""

from __future__ import annotations

from pagewarden.policies.extract._compile import CompiledRules, compile_rules
from pagewarden.policies.extract._documents import Block, Document, ExtractionError, NoTextLayer
from pagewarden.policies.extract._merge import MergeReport, merge_policies, write_policy_file
from pagewarden.policies.extract._offline import HostileText, Statement, statements_of
from pagewarden.policies.extract._run import Extraction, extract
from pagewarden.policies.extract._sources import read_source
from pagewarden.policies.extract._wording import category_of

__all__ = [
    "Block",
    "CompiledRules",
    "Document",
    "Extraction",
    "ExtractionError",
    "HostileText",
    "MergeReport",
    "NoTextLayer",
    "Statement",
    "category_of",
    "compile_rules",
    "extract",
    "merge_policies",
    "read_source",
    "statements_of",
    "write_policy_file",
]
