"""The model path of extraction: candidates per chunk, refinement and structuring,
de-duplication confirmed by the model, rules compiled and checked against the source.

1. Candidates: the documents' blocks, in chunks, each block labelled with its id and place,
   fenced as untrusted data; the model lists the policy statements aimed at `subject`, each
   as an exact quote of one block. A quote the block does not contain (model-invented) is
   dropped and counted; text addressed to the extractor is reported and never sent on.
2. Refinement and structure: statements in batches; the model normalises each into one
   policy with scope, definitions and the required category and risk level (schema-checked).
3. De-duplication: pairs whose descriptions are similar (Gestalt ratio ≥ `SHORTLIST`) and that
   name the same sites and data are put to the model, which confirms the merges; identical
   descriptions merge without asking.
4. Rules: compiled from each description as offline (`compile_rules`); a rule naming a site,
   path or URL that the quoted source does not contain is dropped.

A model call that fails (unreachable, bad output after retries) falls back to the offline
extractor for that part and says so in the warnings: extraction never silently loses a part.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from pydantic import BaseModel, Field

from pagewarden.policies._model import Category, Policy, PolicySource, RiskLevel
from pagewarden.policies.extract._compile import compile_rules, hosts_in, paths_in, urls_in
from pagewarden.policies.extract._documents import Block, Document
from pagewarden.policies.extract._offline import (
    HostileText,
    Statement,
    id_prefix,
    normalise_statement,
    statements_of,
)
from pagewarden.policies.extract._wording import category_of, is_hostile, risk_of

__all__ = ["CHUNK_CHARS", "SHORTLIST", "LLMExtraction", "llm_policies"]

#: characters of document per candidate call
CHUNK_CHARS = 6000
#: statements per refinement call
BATCH = 20
#: descriptions at least this similar are put to the model as possible duplicates
SHORTLIST = 0.6
_DEADLINE_S = 120.0

Progress = Callable[[str, int, int], None]


class _Candidate(BaseModel):
    block: str
    quote: str


class _Candidates(BaseModel):
    statements: list[_Candidate] = Field(default_factory=list)


class _Refined(BaseModel):
    index: int
    description: str = Field(min_length=1)
    scope: str | None = None
    definitions: list[str] = Field(default_factory=list)
    category: Category
    risk_level: RiskLevel


class _RefinedList(BaseModel):
    policies: list[_Refined] = Field(default_factory=list)


class _Decision(BaseModel):
    pair: int
    same: bool


class _Decisions(BaseModel):
    decisions: list[_Decision] = Field(default_factory=list)


@dataclass
class LLMExtraction:
    """What the model path produced."""

    policies: list[Policy] = field(default_factory=list)
    statements: int = 0
    hostile: list[HostileText] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    invented_quotes: int = 0
    merged: int = 0
    calls: int = 0


@dataclass
class _Found:
    statement: Statement
    block_text: str


def _client(llm: Any):
    from pagewarden.llm import LLMClient, LLMConfig

    if isinstance(llm, LLMClient):
        return llm, False
    if isinstance(llm, LLMConfig):
        return LLMClient(llm), True
    if isinstance(llm, dict):
        return LLMClient(LLMConfig.from_mapping(llm)), True
    raise TypeError(f"llm must be an LLMConfig or an LLMClient, not {type(llm).__name__}")


def _render(name: str, **values: str) -> list[dict[str, str]]:
    from pagewarden.llm import PromptTemplate

    return PromptTemplate.load("pagewarden.policies.extract", f"prompts/{name}.txt").render(**values)


def _chunks(blocks: Sequence[Block]) -> list[list[tuple[str, Block]]]:
    chunks: list[list[tuple[str, Block]]] = [[]]
    size = 0
    for number, block in enumerate(blocks, 1):
        if size + len(block.text) > CHUNK_CHARS and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append((f"B{number}", block))
        size += len(block.text) + 40
    return [c for c in chunks if c]


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and normalise_statement(needle) in normalise_statement(haystack)


def _grounded(rule: dict[str, Any], source: str) -> bool:
    """Whether every site, path and URL a compiled rule names is in the source text."""
    text = source.lower()
    body = next(iter(rule.values()))
    values: list[str] = []
    if isinstance(body, str):
        values = [body]
    elif isinstance(body, list):
        values = [v for v in body if isinstance(v, str)]
    elif isinstance(body, dict):
        values = [v for v in body.get("allow_domains", []) if isinstance(v, str)]
    return all(v.lower().lstrip("*.").rstrip("/") in text for v in values)


class _Run:
    def __init__(self, client: Any, subject: str, org: str | None, progress: Progress | None) -> None:
        self.client = client
        self.subject = subject
        self.org = f"## Organisation\n{org}" if org else "## Organisation\n(not named)"
        self.progress = progress
        self.out = LLMExtraction()

    def ask(self, messages: list[dict[str, str]], schema: type[BaseModel], token: str) -> Any:
        self.out.calls += 1
        result = self.client.complete_sync(messages, schema=schema, boundary=token, deadline=_DEADLINE_S)
        return result.parsed

    # 1. candidates ----------------------------------------------------------------------
    def candidates(self, document: Document) -> list[_Found]:
        from pagewarden.llm import Fence, LLMError

        found: list[_Found] = []
        usable = []
        for block in document.blocks:
            if is_hostile(block.text):
                self.out.hostile.append(HostileText(document.name, block.where(), block.text[:2000]))
                continue
            usable.append(block)
        chunks = _chunks(usable)
        for index, chunk in enumerate(chunks, 1):
            by_id = dict(chunk)
            lines = []
            for block_id, block in chunk:
                where = block.where()
                lines.append(f"[{block_id}] ({where}) {'# ' if block.kind == 'heading' else ''}{block.text}")
            text = "\n".join(lines)
            fence = Fence.around(text)
            messages = _render(
                "candidates", subject=self.subject, token=fence.token, org=self.org,
                document=fence.wrap(f"document {id_prefix(document.name).lower()}", text),
            )  # fmt: skip
            try:
                answer: _Candidates = self.ask(messages, _Candidates, fence.token)
            except LLMError as exc:
                self.out.warnings.append(
                    f"{document.name}: part {index}/{len(chunks)}: model failed ({exc}); extracted offline"
                )
                part = Document(document.name, document.kind, blocks=[b for _, b in chunk])
                statements, hostile = statements_of(part)
                self.out.hostile.extend(hostile)
                found.extend(_Found(s, s.quote) for s in statements)
                continue
            for candidate in answer.statements:
                block = by_id.get(candidate.block.strip().strip("[]"))
                quote = " ".join(candidate.quote.split())
                if block is None or not _contains(block.text, quote):
                    self.out.invented_quotes += 1
                    continue
                if is_hostile(quote):
                    self.out.hostile.append(HostileText(document.name, block.where(), quote))
                    continue
                statement = Statement(quote, quote, document.name, block.page, block.section)
                found.append(_Found(statement, block.text))
            if self.progress is not None:
                self.progress(document.name, index, len(chunks))
        return found

    # 2. refinement and structure -----------------------------------------------------------
    def refine(self, found: list[_Found]) -> list[tuple[_Found, _Refined | None]]:
        from pagewarden.llm import Fence, LLMError

        out: list[tuple[_Found, _Refined | None]] = []
        for start in range(0, len(found), BATCH):
            batch = found[start : start + BATCH]
            text = "\n".join(
                f"{n}. ({item.statement.section or 'no section'}) {item.statement.quote}"
                for n, item in enumerate(batch, 1)
            )
            fence = Fence.around(text)
            messages = _render(
                "refine", subject=self.subject, token=fence.token, org=self.org,
                statements=fence.wrap("statements", text),
            )  # fmt: skip
            try:
                answer: _RefinedList = self.ask(messages, _RefinedList, fence.token)
                by_index = {r.index: r for r in answer.policies}
            except LLMError as exc:
                self.out.warnings.append(
                    f"refinement failed ({exc}); {len(batch)} statements kept as written"
                )
                by_index = {}
            out.extend((item, by_index.get(n)) for n, item in enumerate(batch, 1))
        return out

    # 3. de-duplication ----------------------------------------------------------------------
    def deduplicate(self, policies: list[tuple[Policy, str]]) -> list[tuple[Policy, str]]:
        from pagewarden.llm import Fence, LLMError

        keys = [normalise_statement(p.description) for p, _ in policies]
        names = [frozenset({*urls_in(p.description), *paths_in(p.description), *hosts_in(p.description)})
                 for p, _ in policies]  # fmt: skip
        drop: set[int] = set()
        pairs: list[tuple[int, int]] = []
        for j in range(len(policies)):
            for i in range(j):
                if i in drop or names[i] != names[j]:
                    continue
                if keys[i] == keys[j]:
                    drop.add(j)
                    break
                matcher = SequenceMatcher(None, keys[i], keys[j])
                if matcher.real_quick_ratio() >= SHORTLIST and matcher.ratio() >= SHORTLIST:
                    pairs.append((i, j))
        pairs = [(i, j) for i, j in pairs if j not in drop][:60]
        if pairs:
            text = "\n".join(
                f"pair {n}:\n  A: {policies[i][0].description}\n  B: {policies[j][0].description}"
                for n, (i, j) in enumerate(pairs, 1)
            )
            fence = Fence.around(text)
            try:
                messages = _render("merge", token=fence.token, pairs=fence.wrap("policy pairs", text))
                answer: _Decisions = self.ask(messages, _Decisions, fence.token)
                for decision in answer.decisions:
                    if decision.same and 1 <= decision.pair <= len(pairs):
                        i, j = pairs[decision.pair - 1]
                        if i not in drop:
                            drop.add(j)
            except LLMError as exc:
                self.out.warnings.append(f"de-duplication failed ({exc}); possible duplicates kept")
        self.out.merged += len(drop)
        return [item for n, item in enumerate(policies) if n not in drop]


def llm_policies(
    documents: Sequence[Document],
    llm: Any,
    *,
    subject: str | None = None,
    org: str | None = None,
    progress: Progress | None = None,
) -> LLMExtraction:
    """Policies from documents with a model (see the module docstring)."""
    client, owned = _client(llm)
    run = _Run(client, subject or "web agents acting for the organisation's people", org, progress)
    try:
        found: list[_Found] = []
        for document in documents:
            found.extend(run.candidates(document))
        run.out.statements = len(found)
        refined = run.refine(found)
        drafts: list[tuple[Policy, str]] = []
        used: dict[str, int] = {}
        for item, answer in refined:
            statement = item.statement
            description = answer.description if answer is not None else statement.text
            compiled = compile_rules(description)
            rules = []
            for rule in compiled.rules:
                if _grounded(rule, item.block_text):
                    rules.append(rule)
                else:
                    run.out.rejected.append(
                        f"{statement.document}: {json.dumps(rule)} names what the source does not say"
                    )
            run.out.rejected.extend(f"{statement.document}: {r}" for r in compiled.rejected)
            prefix = id_prefix(statement.document)
            used[prefix] = used.get(prefix, 0) + 1
            kinds = [next(iter(r)) for r in rules]
            policy = Policy.model_validate({
                "id": f"{prefix}-{used[prefix]:03d}",
                "category": answer.category if answer is not None else category_of(description, kinds),
                "risk_level": answer.risk_level if answer is not None else risk_of(description),
                "description": description,
                "scope": (answer.scope if answer is not None else None) or subject,
                "definitions": answer.definitions if answer is not None else [],
                "source": PolicySource(kind="extracted", document=statement.document, page=statement.page,
                                       section=statement.section, quote=statement.quote),
                "rules": rules,
                "needs_review": answer is None,
            })  # fmt: skip
            drafts.append((policy, item.block_text))
        run.out.policies = [p for p, _ in run.deduplicate(drafts)]
        if run.out.invented_quotes:
            run.out.warnings.append(
                f"{run.out.invented_quotes} quote(s) from the model are not in the documents: dropped"
            )
        if run.out.merged:
            run.out.warnings.append(f"{run.out.merged} duplicate(s) merged")
        return run.out
    finally:
        if owned:
            client.close()
