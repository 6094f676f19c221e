"""Merging extracted policies into an existing policy set, and writing files with versions.

A new policy that says what an existing one says (the same original sentence, or a
description whose Gestalt similarity is at least `SAME_AS`) is not added again: the existing
policy (its id, its reviewed state, its references) is kept. A policy file is never
rewritten in place without a version: the previous content is kept as ``FILE.rN``.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from pagewarden.policies._loader import PolicySet
from pagewarden.policies._model import Policy
from pagewarden.policies.extract._compile import hosts_in, paths_in, urls_in
from pagewarden.policies.extract._offline import normalise_statement

__all__ = ["SAME_AS", "MergeReport", "merge_policies", "next_revision_path", "write_policy_file"]

#: descriptions at least this similar (difflib ratio, normalised words) are the same policy
SAME_AS = 0.85


@dataclass
class MergeReport:
    """What a merge did: ids added, and new ids that duplicated an existing policy."""

    added: list[str] = field(default_factory=list)
    duplicates: dict[str, str] = field(default_factory=dict)  # new id → existing id


def _quote_key(policy: Policy) -> str:
    return normalise_statement(policy.source.quote) if policy.source and policy.source.quote else ""


def _salient(policy: Policy) -> frozenset[str]:
    """What makes two similar sentences different policies: the URLs, paths, hosts and numbers
    they name, and the rules compiled from them."""
    text = policy.description
    names = {*urls_in(text), *paths_in(text), *hosts_in(text), *re.findall(r"\d+", text)}
    names.update(repr(rule) for rule in policy.rules)
    return frozenset(names)


def duplicate_of(policy: Policy, existing: list[Policy], threshold: float = SAME_AS) -> Policy | None:
    """The existing policy that `policy` repeats, if any: the same words or the same original
    sentence, or a Gestalt similarity of at least `threshold` between descriptions that name
    the same things."""
    return _Index(existing, threshold).find(policy)


class _Index:
    """Existing policies by normalised words, quote and salient names (for fast merging)."""

    def __init__(self, policies: list[Policy], threshold: float = SAME_AS) -> None:
        self.threshold = threshold
        self.by_key: dict[str, Policy] = {}
        self.by_salient: dict[frozenset[str], list[tuple[str, Policy]]] = {}
        for policy in policies:
            self.add(policy)

    def add(self, policy: Policy) -> None:
        key = normalise_statement(policy.description)
        self.by_key.setdefault(key, policy)
        quote = _quote_key(policy)
        if quote:
            self.by_key.setdefault(quote, policy)
        self.by_salient.setdefault(_salient(policy), []).append((key, policy))

    def find(self, policy: Policy) -> Policy | None:
        key = normalise_statement(policy.description)
        for probe in (key, _quote_key(policy)):
            if probe and probe in self.by_key:
                return self.by_key[probe]
        for other_key, other in self.by_salient.get(_salient(policy), ()):
            matcher = SequenceMatcher(None, key, other_key, autojunk=False)
            if (
                matcher.real_quick_ratio() >= self.threshold
                and matcher.quick_ratio() >= self.threshold
                and matcher.ratio() >= self.threshold
            ):
                return other
        return None


def _free_id(policy_id: str, taken: set[str]) -> str:
    if policy_id not in taken:
        return policy_id
    match = re.match(r"^(.*?)(\d+)$", policy_id)
    stem, number = (match.group(1), int(match.group(2))) if match else (policy_id + "-", 1)
    width = len(match.group(2)) if match else 3
    while True:
        number += 1
        candidate = f"{stem}{number:0{width}d}"
        if candidate not in taken:
            return candidate


def merge_policies(existing: PolicySet | None, new: list[Policy]) -> tuple[PolicySet, MergeReport]:
    """`existing` plus the policies of `new` that it does not already hold (ids made unique)."""
    kept = list(existing or [])
    report = MergeReport()
    taken = {p.id for p in kept}
    index = _Index(kept)
    for policy in new:
        same = index.find(policy)
        if same is not None:
            report.duplicates[policy.id] = same.id
            continue
        policy_id = _free_id(policy.id, taken)
        if policy_id != policy.id:
            policy = policy.model_copy(update={"id": policy_id})
        kept.append(policy)
        index.add(policy)
        taken.add(policy_id)
        report.added.append(policy_id)
    version = existing.version if existing is not None else 1
    source = existing.source if existing is not None else None
    return PolicySet(kept, version=version, source=source), report


def next_revision_path(path: Path) -> Path:
    """``FILE.rN`` with the first N not yet used."""
    number = 1
    while True:
        candidate = path.with_name(f"{path.name}.r{number}")
        if not candidate.exists():
            return candidate
        number += 1


def write_policy_file(path: str | Path, policies: PolicySet) -> Path | None:
    """Write `policies` to `path` (YAML, or JSON for ``.json``) after checking that the file
    loads back; an existing file whose content changes is first kept as ``FILE.rN``.

    Returns the path of the kept previous version, or None when there was none."""
    path = Path(path)
    PolicySet.from_dict(policies.to_dict(), source=str(path))  # the linter: never write a bad file
    previous: Path | None = None
    tmp = path.with_name(f".{path.name}.tmp")
    policies.dump(tmp)
    if path.exists():
        if path.read_bytes() == tmp.read_bytes():
            tmp.unlink()
            return None
        previous = next_revision_path(path)
        shutil.copy2(path, previous)
    tmp.replace(path)
    return previous
