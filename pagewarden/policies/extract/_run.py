"""`extract`: sources in, a merged, linted policy set out (offline, or with a model)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagewarden.policies._loader import PolicySet
from pagewarden.policies._model import Policy
from pagewarden.policies.extract._documents import Document, ExtractionError
from pagewarden.policies.extract._merge import MergeReport, merge_policies
from pagewarden.policies.extract._offline import HostileText, offline_policies
from pagewarden.policies.extract._sources import read_source

__all__ = ["Extraction", "extract"]

Progress = Callable[[str, int, int], None]


@dataclass
class Extraction:
    """The result of one extraction run."""

    policies: PolicySet  # the merged set (existing policies first)
    new: list[Policy]  # the policies this run added
    statements: int  # candidate statements found in the documents
    documents: list[Document] = field(default_factory=list)
    errors: list[ExtractionError] = field(default_factory=list)  # sources that could not be read
    hostile: list[HostileText] = field(default_factory=list)
    rejected_rules: list[str] = field(default_factory=list)
    merge: MergeReport = field(default_factory=MergeReport)
    warnings: list[str] = field(default_factory=list)
    mode: str = "offline"  # offline | llm

    @property
    def extracted(self) -> int:
        """Policies extracted before merging with what existed."""
        return len(self.merge.added) + len(self.merge.duplicates)


def extract(
    sources: Sequence[str | Path],
    *,
    existing: PolicySet | None = None,
    llm: Any = None,
    subject: str | None = None,
    org: str | None = None,
    progress: Progress | None = None,
) -> Extraction:
    """Extract policies from `sources` (PDF, HTML, Markdown, text files or URLs).

    Without `llm` the deterministic extractor runs (policies marked ``needs_review``); with
    an `LLMConfig`/`LLMClient` the model path runs (see `pagewarden.policies.extract.llm`).
    The result is merged into `existing` (duplicates not added again) and is loadable by the
    policy linter. A source that cannot be read is reported in `errors`; the others still
    count."""
    documents: list[Document] = []
    errors: list[ExtractionError] = []
    for source in sources:
        name = str(source)
        try:
            documents.append(
                read_source(source, (lambda d, t, n=name: progress(n, d, t)) if progress else None)
            )
        except ExtractionError as exc:
            errors.append(exc)
    warnings = [f"{d.name}: {w}" for d in documents for w in d.warnings]
    scope = subject if subject else None
    if llm is not None:
        from pagewarden.policies.extract._llm import llm_policies

        found = llm_policies(documents, llm, subject=subject, org=org, progress=progress)
        new, count, hostile, rejected = found.policies, found.statements, found.hostile, found.rejected
        warnings.extend(found.warnings)
        mode = "llm"
    else:
        new, count, hostile, rejected = offline_policies(documents, scope=scope, progress=progress)
        mode = "offline"
    merged, report = merge_policies(existing, new)
    added = set(report.added)
    return Extraction(
        policies=merged,
        new=[p for p in merged if p.id in added],
        statements=count,
        documents=documents,
        errors=errors,
        hostile=hostile,
        rejected_rules=rejected,
        merge=report,
        warnings=warnings,
        mode=mode,
    )
