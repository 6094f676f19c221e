"""Wording of policy statements: obligation and prohibition, risk, category, hostility.

Plain regular expressions over one sentence; the deterministic extractor and the rule
compiler share them.
"""

from __future__ import annotations

import re

__all__ = [
    "HOSTILE_RE",
    "OBLIGATION_RE",
    "POLICY_HEADING_RE",
    "PROHIBITION_RE",
    "category_of",
    "is_hostile",
    "is_statement",
    "risk_of",
    "split_sentences",
]

_I = re.I

#: obligation or prohibition wording that makes a sentence a policy statement
OBLIGATION_RE = re.compile(
    r"\b(must|mustn['’]t|shall|never|do not|don['’]t|does not|may not|can ?not|can['’]t|"
    r"(?<!not )(?<!the )only\b|always|is required|are required|required to|"
    r"(?:is|are) (?:strictly )?(?:prohibited|forbidden|not (?:allowed|permitted))|"
    r"prohibited|forbidden|not permitted|not allowed|off[- ]limits|"
    r"requires? (?:(?:explicit|prior|written|the user['’]s|a manager['’]s) )*"
    r"(?:approval|consent|confirmation|authori[sz]ation|permission|sign[- ]off)|"
    r"needs? (?:(?:explicit|prior|written) )*(?:approval|consent|confirmation|permission)|"
    r"ask (?:the user|for|before|first)|confirm (?:with|before)|check with|"
    r"(?:get|obtain|seek) (?:(?:explicit|prior|written) )*(?:approval|consent|permission|confirmation)|"
    r"should(?: not|n['’]t)?|have to|has to|is not to|are not to|under no circumstances|at no time|"
    r"refrain from|avoid|be careful|make sure|ensure)\b",
    _I,
)

#: prohibition wording (a negative obligation)
PROHIBITION_RE = re.compile(
    r"\b(never|must not|mustn['’]t|shall not|do not|don['’]t|does not|may not|can ?not|can['’]t|"
    r"should not|shouldn['’]t|is not to|are not to|not (?:be )?(?:allowed|permitted)|prohibited|forbidden|"
    r"off[- ]limits|banned|blocked|not to be|under no circumstances|at no time|refrain from|avoid|"
    r"no (?:access|visits?|browsing|use|sharing))\b",
    _I,
)

_HIGH_RE = re.compile(
    r"\b(never|must not|mustn['’]t|shall not|under no circumstances|at no time|strictly|prohibited|"
    r"forbidden|not permitted|zero tolerance|immediately|termination|disciplinary|illegal|unlawful|"
    r"critical|severe)\b",
    _I,
)
_HIGH_IMPACT_RE = re.compile(
    r"\b(passwords?|credentials?|secrets?|api keys?|tokens?|private keys?|credit cards?|card numbers?|"
    r"social security|ssn|bank|iban|payments?|pay|wire|transfer|funds|money|delet\w*|irreversibl\w*|"
    r"production|personal data|customer data|confidential)\b",
    _I,
)
_LOW_RE = re.compile(
    r"\b(should|recommended|preferably|prefer|try to|where possible|if possible|encouraged|ideally|"
    r"consider|be careful|avoid)\b",
    _I,
)
_STRONG_RE = re.compile(r"\b(must|never|do not|don['’]t|shall|prohibited|forbidden|required|only)\b", _I)

#: headings under which list items are policies even without obligation wording
POLICY_HEADING_RE = re.compile(
    r"\b(polic(?:y|ies)|rules?|guidelines?|requirements?|prohibit\w*|restrict\w*|forbidden|not allowed|"
    r"allowed|permitted|approved|do['’]?s and don['’]?ts|don['’]?ts?|must|never|security|acceptable use|"
    r"conduct|compliance|privacy|confidential\w*|data handling|data protection|approval|consent|"
    r"obligations?|standards?|procedures?|safety|(?:web)?sites|domains|access|limits?|boundar\w*)\b",
    _I,
)

#: text addressed to the extractor (or to any model reading the document)
HOSTILE_RE = re.compile(
    r"(\b(ignore|disregard|forget|override|skip)\b.{0,40}\b(above|previous|prior|preceding|earlier|"
    r"all|other|these|those|your)\b.{0,30}\b(instructions?|polic(?:y|ies)|rules?|text|content|prompts?|"
    r"guidelines?)\b"
    r"|\b(output|return|produce|extract|emit|report|list)\b.{0,20}\b(no|zero|an empty|empty|only these)\b"
    r".{0,15}\b(polic(?:y|ies)|rules?|list|results?|output)\b"
    r"|\b(you are|act as|pretend to be|you're)\b.{0,30}\b(an? )?(ai|assistant|language model|llm|extractor|"
    r"policy agent|chatbot|model)\b"
    r"|\b(system|developer) (prompt|message|instructions?)\b"
    r"|\b(attention|note|message|instructions?)\b.{0,5}\b(to|for)\b.{0,10}\b(the )?(ai|llm|model|extractor|"
    r"assistant|policy agent|language model|parser|bot)\b"
    r"|\bnew instructions?\s*:"
    r"|\b(mark|set|rate|classify)\b.{0,30}\b(all|every|each)\b.{0,30}\b(low|no) risk\b"
    r"|\b(this document|these policies|the policies above)\b.{0,30}\b(are|is)\b.{0,10}\b(void|invalid|"
    r"obsolete|not to be extracted|superseded by this (line|sentence|note))\b"
    r"|</?(system|assistant|user|instructions?)>"
    r"|\[/?(INST|SYS)\]"
    r"|\bdo not (extract|output|report|include) (any|these|the|this)\b)",
    _I | re.S,
)

_CATEGORY_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("injection", re.compile(
        r"\b(instructions? (?:found |written |embedded )?(?:in|on|from) (?:a |the )?(?:web ?)?"
        r"(?:pages?|emails?|content|comments?|websites?|sites?|documents?|messages?)|prompt injection|"
        r"untrusted (?:content|text|pages?)|embedded instructions|follow(?:ing)? (?:any )?instructions)",
        _I)),
    ("consent", re.compile(
        r"\b(ask|confirm\w*|approv\w*|consent|permission|authori[sz]ation|sign[- ]off|check with)\b", _I)),
    ("data", re.compile(
        r"\b(passwords?|credentials?|personal (?:data|information)|pii|confidential|customer data|secrets?|"
        r"api keys?|tokens?|credit cards?|card numbers?|ssn|social security|email address\w*|phone numbers?|"
        r"share|disclose|upload|leak|export|data)\b", _I)),
    ("error_handling", re.compile(
        r"\b(errors?|fail\w*|retry|unexpected|unavailable|time ?outs?|crash\w*|report (?:it|the problem))\b",
        _I)),
    ("boundary", re.compile(
        r"\b(visit|navigat\w*|brows\w*|urls?|websites?|sites?|domains?|pages?|links?|portal|access|"
        r"go to)\b|https?://|(?<![\w/])/[a-z]", _I)),
    ("execution", re.compile(
        r"\b(delet\w*|purchas\w*|buy\w*|pay\w*|submit\w*|post\w*|publish\w*|send\w*|transfer\w*|merg\w*|"
        r"install\w*|download\w*|run\w*|execut\w*|modif\w*|chang\w*|click\w*|forms?)\b", _I)),
    ("hierarchy", re.compile(
        r"\b(manager|supervisor|administrator|owner|roles?|on behalf|authority|escalat\w*|superior)\b", _I)),
    ("goal", re.compile(r"\b(task|goal|scope|unrelated|off[- ]topic|focus\w*|objective)\b", _I)),
)  # fmt: skip

_ABBREVIATIONS_RE = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|no|dept|mr|mrs|ms|dr|st)\.\s", _I)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])[\"'”’)]?\s+(?=[\"'“(]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph (abbreviations like "e.g." do not end a sentence)."""
    protected = _ABBREVIATIONS_RE.sub(lambda m: m.group(0).replace(". ", "\u2024 "), text)
    parts = _SENTENCE_END_RE.split(protected)
    return [p.replace("\u2024 ", ". ").strip() for p in parts if p and p.strip()]


def is_statement(sentence: str) -> bool:
    """Whether a sentence states an obligation or a prohibition."""
    if sentence.rstrip().endswith("?"):
        return False
    return bool(OBLIGATION_RE.search(sentence))


def is_hostile(text: str) -> bool:
    """Whether text addresses the extractor or a model instead of the reader."""
    return bool(HOSTILE_RE.search(text))


def risk_of(text: str) -> str:
    """``high`` | ``medium`` | ``low`` from the wording of a statement."""
    if _HIGH_RE.search(text):
        return "high"
    prohibition = PROHIBITION_RE.search(text)
    if (prohibition or re.search(r"\b(must|only)\b", text, _I)) and _HIGH_IMPACT_RE.search(text):
        return "high"
    if _LOW_RE.search(text) and not _STRONG_RE.search(text):
        return "low"
    return "medium"


def category_of(text: str, rule_kinds: list[str]) -> str:
    """The category of a statement: from the rules compiled for it, else from its words."""
    if "sensitive_data" in rule_kinds:
        return "data"
    if "consent" in rule_kinds:
        return "consent"
    if any(k in rule_kinds for k in ("url_deny", "url_allow", "domain_allow", "domain_deny")):
        return "boundary"
    for category, pattern in _CATEGORY_RES:
        if pattern.search(text):
            return category
    return "execution"
