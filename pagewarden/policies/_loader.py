"""Reading policy files (YAML or JSON) into a `PolicySet`, with located, readable errors."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from pagewarden.policies._model import Policy
from pagewarden.policies._rules_schema import RuleSyntaxError, known_fields, model_for, parse_rule

__all__ = ["PolicyError", "PolicySet", "Problem"]

SUPPORTED_VERSIONS = (1,)
Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    """One fault in a policy file: where it is and what is wrong."""

    file: str
    message: str
    field: str = ""
    policy_id: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        who = f" policy {self.policy_id}:" if self.policy_id else ""
        what = f" {self.field}:" if self.field else ""
        return f"{where}:{who}{what} {self.message}"


class PolicyError(ValueError):
    """A policy file could not be loaded; `problems` lists every fault found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _field_name(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _LineMap:
    """Line numbers (1-based) of the nodes of a YAML/JSON document, by path."""

    def __init__(self, text: str) -> None:
        self._lines: dict[Path_, int] = {}
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            return
        if node is not None:
            self._walk(node, ())

    def _walk(self, node: yaml.Node, path: Path_) -> None:
        self._lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    self._lines[(*path, key.value)] = key.start_mark.line + 1
                    self._walk(value, (*path, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, (*path, index))

    def line(self, path: Path_) -> int | None:
        """The line of the deepest node on `path` that exists in the document."""
        for end in range(len(path), -1, -1):
            line = self._lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


def _parse_text(text: str, file: str, suffix: str) -> Any:
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise PolicyError([Problem(file, f"invalid JSON: {exc.msg}", line=exc.lineno)]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = getattr(exc, "problem", None) or str(exc)
        raise PolicyError(
            [Problem(file, f"invalid YAML: {reason}", line=mark.line + 1 if mark else None)]
        ) from None


def _validation_problems(
    exc: ValidationError,
    file: str,
    base: Path_,
    policy_id: str | None,
    lines: _LineMap,
    model: type[BaseModel] = Policy,
) -> Iterator[Problem]:
    for err in exc.errors():
        loc: Path_ = tuple(err["loc"])
        path = (*base, *loc)
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "is required"
        elif err["type"] == "extra_forbidden":
            msg = "is not a known field"
            known = known_fields(model, loc[:-1])
            if known:
                names = [k.split(" ")[0] for k in known]
                close = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                msg += f"{hint}; known fields: {', '.join(known)}"
        elif err["type"] == "enum":
            expected = err.get("ctx", {}).get("expected", "")
            msg = f"must be one of {expected}; got {err.get('input')!r}"
        elif msg.startswith("Value error, "):
            msg = msg.removeprefix("Value error, ")
        yield Problem(file, msg, _field_name(path[2:]), policy_id, lines.line(path))


def _parse_policy(raw: Any, index: int, file: str, lines: _LineMap) -> tuple[Policy | None, list[Problem]]:
    base: Path_ = ("policies", index)
    if not isinstance(raw, dict):
        return None, [
            Problem(file, "each policy must be a mapping", f"policies[{index}]", None, lines.line(base))
        ]
    policy_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    problems: list[Problem] = []
    rules_raw = raw.get("rules") or []
    rules = []
    if not isinstance(rules_raw, list):
        problems.append(
            Problem(
                file, "must be a list of one-key mappings", "rules", policy_id, lines.line((*base, "rules"))
            )
        )
        rules_raw = []
    for r_index, entry in enumerate(rules_raw):
        r_path: Path_ = (*base, "rules", r_index)
        try:
            rules.append(parse_rule(entry))
        except RuleSyntaxError as exc:
            problems.append(
                Problem(file, str(exc), _field_name(r_path[2:]), policy_id, lines.line((*r_path, *exc.path)))
            )
        except ValidationError as exc:
            kind = next(iter(entry))
            problems.extend(
                _validation_problems(exc, file, (*r_path, kind), policy_id, lines, model_for(kind) or Policy)
            )
    try:
        policy = Policy.model_validate({**raw, "rules": []})
    except ValidationError as exc:
        problems.extend(_validation_problems(exc, file, base, policy_id, lines))
        return None, problems
    if problems:
        return None, problems
    return policy.model_copy(update={"rules": rules}), []


class PolicySet:
    """An ordered, immutable collection of policies with unique ids."""

    def __init__(
        self, policies: Iterable[Policy] = (), *, version: int = 1, source: str | None = None
    ) -> None:
        self.version = version
        self.source = source
        self._policies: tuple[Policy, ...] = tuple(policies)
        seen: dict[str, int] = {}
        problems = []
        for index, policy in enumerate(self._policies):
            if policy.id in seen:
                problems.append(
                    Problem(
                        source or "<policies>",
                        f"duplicate id (first used by policies[{seen[policy.id]}])",
                        "id",
                        policy.id,
                    )
                )
            seen.setdefault(policy.id, index)
        if problems:
            raise PolicyError(problems)
        self._by_id = {p.id: p for p in self._policies}

    # -- construction -------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> PolicySet:
        """Read a YAML (``.yaml``/``.yml``) or JSON (``.json``) policy file."""
        path = Path(path)
        file = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PolicyError([Problem(file, "file not found")]) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError([Problem(file, f"cannot read: {exc}")]) from None
        return cls.from_text(text, source=file, fmt="json" if path.suffix.lower() == ".json" else "yaml")

    @classmethod
    def from_text(cls, text: str, *, source: str = "<text>", fmt: str = "yaml") -> PolicySet:
        """Parse policy text in `fmt` ("yaml" or "json")."""
        data = _parse_text(text, source, ".json" if fmt == "json" else ".yaml")
        return cls._from_data(data, source, _LineMap(text))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> PolicySet:
        """Build from already-parsed data of the file format (``{version, policies}``)."""
        return cls._from_data(data, source, _LineMap(""))

    @classmethod
    def _from_data(cls, data: Any, file: str, lines: _LineMap) -> PolicySet:
        if data is None:
            raise PolicyError(
                [Problem(file, "the file is empty; expected 'version: 1' and a 'policies' list")]
            )
        if not isinstance(data, dict):
            raise PolicyError(
                [
                    Problem(
                        file,
                        "the top level must be a mapping with 'version' and 'policies'",
                        line=lines.line(()),
                    )
                ]
            )
        problems: list[Problem] = []
        unknown = sorted(set(data) - {"version", "policies"})
        for key in unknown:
            problems.append(Problem(file, "is not a known top-level key", str(key), line=lines.line((key,))))
        version = data.get("version")
        if version is None:
            problems.append(
                Problem(
                    file, f"is required (supported: {SUPPORTED_VERSIONS})", "version", line=lines.line(())
                )
            )
        elif version not in SUPPORTED_VERSIONS or isinstance(version, bool):
            problems.append(
                Problem(
                    file,
                    f"unsupported version {version!r} (supported: {SUPPORTED_VERSIONS})",
                    "version",
                    line=lines.line(("version",)),
                )
            )
        raw_policies = data.get("policies")
        if not isinstance(raw_policies, list):
            problems.append(
                Problem(file, "must be a list of policies", "policies", line=lines.line(("policies",)))
            )
            raise PolicyError(problems)
        policies: list[Policy] = []
        first_index: dict[str, int] = {}
        for index, raw in enumerate(raw_policies):
            policy, found = _parse_policy(raw, index, file, lines)
            problems.extend(found)
            raw_id = raw.get("id") if isinstance(raw, dict) else None
            if isinstance(raw_id, str):
                if raw_id in first_index:
                    problems.append(
                        Problem(
                            file,
                            f"duplicate id (first used by policies[{first_index[raw_id]}])",
                            "id",
                            raw_id,
                            lines.line(("policies", index, "id")),
                        )
                    )
                    continue
                first_index[raw_id] = index
            if policy is not None:
                policies.append(policy)
        if problems:
            raise PolicyError(problems)
        return cls(policies, version=int(version), source=file)

    # -- access -------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Policy]:
        return iter(self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    def __contains__(self, policy_id: object) -> bool:
        return policy_id in self._by_id

    def __repr__(self) -> str:
        return f"PolicySet({len(self)} policies from {self.source or 'memory'})"

    def get(self, policy_id: str) -> Policy | None:
        """The policy with this id, or None."""
        return self._by_id.get(policy_id)

    @property
    def ids(self) -> list[str]:
        """Policy ids in file order."""
        return [p.id for p in self._policies]

    @classmethod
    def combine(cls, items: Iterable[PolicySet | str | Path | Policy]) -> PolicySet:
        """One set from several: policy sets, policy file paths (loaded) and policies, in order.

        Every file is read (all their problems are reported at once); a policy id used twice is
        a `PolicyError` that names both places it comes from.
        """
        problems: list[Problem] = []
        parts: list[tuple[str, PolicySet]] = []
        loose: list[Policy] = []
        for item in items:
            if isinstance(item, Policy):
                loose.append(item)
                continue
            if loose:
                parts.append(("<policies>", cls(loose)))
                loose = []
            if isinstance(item, PolicySet):
                parts.append((item.source or "<policies>", item))
            elif isinstance(item, (str, Path)):
                try:
                    parts.append((str(item), cls.load(item)))
                except PolicyError as exc:
                    problems.extend(exc.problems)
            else:
                raise TypeError(
                    "policies must be PolicySet objects, policy file paths or Policy objects, "
                    f"not {type(item).__name__}"
                )
        if loose:
            parts.append(("<policies>", cls(loose)))
        first: dict[str, str] = {}
        merged: list[Policy] = []
        for source, policy_set in parts:
            for policy in policy_set:
                if policy.id in first:
                    problems.append(
                        Problem(
                            source,
                            f"policy id {policy.id!r} is also defined in {first[policy.id]}; "
                            "ids must be unique across the merged files (rename one, or leave one file out)",
                            "id",
                            policy.id,
                        )
                    )
                    continue
                first[policy.id] = source
                merged.append(policy)
        if problems:
            raise PolicyError(problems)
        sources = list(dict.fromkeys(source for source, _ in parts))
        return cls(merged, source=" + ".join(sources) if sources else None)

    def merged(self, other: PolicySet | Iterable[Policy]) -> PolicySet:
        """A new set with `other`'s policies appended; duplicate ids are an error."""
        return PolicySet([*self._policies, *other], version=self.version, source=self.source)

    def with_subresources(self, hosts: Iterable[str]) -> PolicySet:
        """A new set whose ``domain_allow`` rules also list `hosts` (domain patterns) under
        ``subresources``: pages may load from them, no tab may go there. A set with no
        ``domain_allow`` rule comes back unchanged (nothing restricts loads)."""
        from pagewarden.policies._rules_schema import DomainAllowRule

        extra = [hosts] if isinstance(hosts, str) else [str(h) for h in hosts]
        if not extra:
            return self

        def widen(rule: Any) -> Any:
            if not isinstance(rule, DomainAllowRule):
                return rule
            body = rule.model_dump()
            body["subresources"] = list(dict.fromkeys([*rule.subresources, *extra]))
            return DomainAllowRule.model_validate(body)

        policies = [p.model_copy(update={"rules": [widen(r) for r in p.rules]}) for p in self._policies]
        return PolicySet(policies, version=self.version, source=self.source)

    def to_dict(self) -> dict[str, Any]:
        """The file form: ``{"version": 1, "policies": [...]}``."""
        return {"version": self.version, "policies": [p.to_dict() for p in self._policies]}

    def dump(self, path: str | Path) -> None:
        """Write as YAML (or JSON for a ``.json`` path)."""
        path = Path(path)
        data = self.to_dict()
        if path.suffix.lower() == ".json":
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
