"""Rule compilation: machine-checkable rules from the wording of one policy statement.

Only what a statement says plainly is compiled; everything else stays a policy for the
semantic tier (and a person) to apply:

* a URL or path that must not be visited → ``url_deny`` (a host alone → ``domain_deny``);
* the sites the agent may use ("only", "approved", "other than") → ``domain_allow``;
* "ask / confirm / get approval before <doing X>", "<X> requires approval" → ``consent``;
* "never share / enter <a recognisable kind of data>" → ``sensitive_data`` (with the hosts it
  may go to, when the statement names them: "except on sso.corp.test").

Each compiled rule is validated by the policy schema; one that does not validate is dropped
and reported, never written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pagewarden.policies._rules_schema import RuleSyntaxError, parse_rule
from pagewarden.policies.extract._wording import PROHIBITION_RE

__all__ = ["CompiledRules", "compile_rules", "hosts_in", "paths_in", "urls_in"]

_I = re.I
_URL_RE = re.compile(r"\bhttps?://[^\s<>\"'()\[\]{}]+", _I)
_FILE_EXTENSIONS = frozenset(str.split(
    "pdf md txt html htm doc docx xls xlsx csv png jpg jpeg gif svg yaml yml json py js ts exe zip sh "
    "ppt pptx odt rtf xml log ini cfg conf tar gz"
))
_HOST_RE = re.compile(
    r"(?<![@\w.\-/])(\*\.)?((?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?::\d{1,5})?(?![\w\-]|\.\w)",
    _I,
)
_PATH_RE = re.compile(
    r"(?<![\w/.:~])(/[A-Za-z0-9_\-.~%*]*[A-Za-z][A-Za-z0-9_\-.~%*]*(?:/[A-Za-z0-9_\-.~%*]+)*/?)"
)
_NAV_RE = re.compile(
    r"\b(visit\w*|access\w*|open\w*|navigat\w*|go(?:ing)? to|brows\w*|load\w*|use|using|click\w*|"
    r"follow\w*|enter(?:ing)? (?:the )?(?:url|page|site|address)|urls?|pages?|sites?|websites?|links?|"
    r"paths?|addresses|portals?|consoles?|panels?|sections?|areas?)\b",
    _I,
)
_ALLOW_RE = re.compile(
    r"\b(only|approved|allowed|permitted|authori[sz]ed|whitelisted|allow[- ]?listed|may use|can use|"
    r"may visit|can visit|may access|can access|limited to|restricted to|restrict\w* (?:\w+ ){0,4}to|"
    r"stick to|"
    r"stay (?:on|within)|trusted)\b",
    _I,
)
_EXCEPT_RE = re.compile(
    r"\b(other than|except|apart from|besides|outside(?: of)?|not (?:on|in) the list)\b", _I
)
_CONSENT_RE = re.compile(
    r"\b(ask(?:ing)?(?: the user| a human| the requester| your manager| for (?:\w+ ){0,2}(?:approval|"
    r"permission|consent|confirmation))?|confirm(?:ation)?(?: with (?:the user|a human|the requester))?|"
    r"check with (?:the user|a human|your manager)|(?:get|obtain|seek|request)(?:ing)? (?:(?:the user['’]s|"
    r"explicit|prior|written|human) )*(?:approval|consent|permission|confirmation|sign[- ]off))\s+"
    r"(?:first\s+)?before\s+(?P<before>[^.;:!?]+)"
    r"|(?P<subject>(?:\b\w+ing\b)(?: [\w'’-]+){0,5}?)\s+(?:always\s+)?(?:requires?|needs?|is subject to)\s+"
    r"(?:(?:explicit|prior|written|the user['’]s|human|a manager['’]s|manager) )*(?:approval|consent|"
    r"confirmation|permission|sign[- ]off)"
    r"|\b(?:never|do not|don['’]t|must not|may not|cannot)\s+(?P<without>[^.;:!?]+?)\s+without\s+"
    r"(?:(?:the user['’]s|explicit|prior|written|human) )*"
    r"(?:approval|consent|permission|confirmation|asking)",
    _I,
)
_DATA_VERB_RE = re.compile(
    r"\b(shar\w*|enter\w*|typ\w*|send\w*|disclos\w*|past\w*|upload\w*|post\w*|reveal\w*|giv\w*|provid\w*|"
    r"submit\w*|transmit\w*|email\w*|writ\w*|put\w*|includ\w*|expos\w*|leak\w*|stor\w*|fill\w*|input\w*|"
    r"us(?:e|ing))\b",
    _I,
)
#: recognisable kinds of data → the named pattern of `sensitive_data`
DATA_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(passwords?|passphrases?|passcodes?|login credentials|credentials|pins?)\b", _I),
     "password"),
    (re.compile(r"\b(api[- ]?keys?|access tokens?|auth(?:entication)? tokens?|bearer tokens?|tokens?|"
                r"secret keys?)\b", _I), "api_key"),
    (re.compile(r"\b(private keys?|ssh keys?)\b", _I), "private_key"),
    (re.compile(r"\b(credit[- ]?cards?|debit cards?|card numbers?|payment cards?|card details)\b", _I),
     "card_number"),
    (re.compile(r"\b(social security(?: numbers?)?|ssns?)\b", _I), "us_ssn"),
    (re.compile(r"\b(ibans?|bank account(?: numbers?| details)?)\b", _I), "iban"),
    (re.compile(r"\b(e-?mail addresses|email address)\b", _I), "email"),
    (re.compile(r"\b(jwts?|json web tokens?)\b", _I), "jwt"),
    (re.compile(r"\b(secrets)\b", _I), "secret"),
)  # fmt: skip
_DATA_DESTINATION_RE = re.compile(r"\b(?:except|other than|only|unless|but|apart from)\b", _I)

_DETERMINERS = frozenset(str.split(
    "a an the any your their its this that these those our my some all every each"
))
_OBJECT_STOP = frozenset(str.split(
    "on in to for from with via at by of and or unless if when while without until before after as "
    "than that which who so"
))
_VAGUE = frozenset(str.split(
    "anything something everything action actions it them this that acting proceeding changes change "
    "things thing stuff"
))
#: verbs whose base form is itself a good element term ("Delete …" buttons)
_DESTRUCTIVE = frozenset(str.split(
    "delete remove purchase buy pay transfer merge publish cancel close order book archive unsubscribe "
    "deactivate terminate revoke reset wipe erase"
))
_VERBS = frozenset(str.split(
    "delete remove purchase buy pay transfer merge publish cancel close order book archive unsubscribe "
    "deactivate terminate revoke reset wipe erase submit send post create invite share approve accept "
    "sign change update modify edit run install download upload make place confirm grant add open file "
    "enter type fill reply comment schedule move rename assign commit push deploy"
))
_TYPING_VERBS = frozenset({"enter", "type", "fill"})


def _gerund_to_verb() -> dict[str, str]:
    out: dict[str, str] = {}
    for verb in _VERBS:
        out[verb] = verb
        out[verb + "ing"] = verb
        if verb.endswith("e"):
            out[verb[:-1] + "ing"] = verb
        out[verb + verb[-1] + "ing"] = verb
        out[verb + "s"] = verb
    return out


_VERB_FORMS = _gerund_to_verb()


@dataclass
class CompiledRules:
    """Rules compiled for one statement, and the ones that failed validation."""

    rules: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return [next(iter(rule)) for rule in self.rules]

    def add(self, rule: dict[str, Any]) -> None:
        try:
            parse_rule(rule)
        except (RuleSyntaxError, ValidationError, ValueError) as exc:
            self.rejected.append(f"{next(iter(rule))}: {str(exc).splitlines()[0]}")
            return
        if rule not in self.rules:
            self.rules.append(rule)


def urls_in(text: str) -> list[str]:
    """Absolute http(s) URLs in text (trailing punctuation removed)."""
    return list(dict.fromkeys(u.rstrip(".,;:!?'\"") for u in _URL_RE.findall(text)))


def hosts_in(text: str) -> list[str]:
    """Host names written in text (``forum.test``, ``*.corp.example``), file names excluded."""
    without_urls = _URL_RE.sub(" ", text)
    hosts = []
    for match in _HOST_RE.finditer(without_urls):
        host = (match.group(1) or "") + match.group(2).lower()
        if host.rsplit(".", 1)[-1] in _FILE_EXTENSIONS:
            continue
        hosts.append(host)
    for url in urls_in(text):
        host = re.sub(r"^https?://([^/:?#]+).*$", r"\1", url, flags=_I).lower()
        hosts.append(host)
    return list(dict.fromkeys(hosts))


def paths_in(text: str) -> list[str]:
    """Site paths written in text (``/admin``, ``/settings/billing``), not inside URLs."""
    without_urls = _URL_RE.sub(" ", text)
    paths = (p.rstrip(".,;:!?") for p in _PATH_RE.findall(without_urls))
    return list(dict.fromkeys(p for p in paths if len(p) > 1))


def _object_terms(phrase: str) -> tuple[list[str], list[str]]:
    """Element terms and action kinds for "submitting a payment", "deleting a repository"."""
    words = re.findall(r"[A-Za-z][\w'’-]*", phrase)
    verb = None
    while words and words[0].lower() in {"you", "the", "agent", "agents", "anyone", "we", "they"}:
        words.pop(0)
    if words and words[0].lower() in _VERB_FORMS:
        verb = _VERB_FORMS[words.pop(0).lower()]
    elif words and words[0].lower().endswith("ing"):
        words.pop(0)  # "doing", "performing": a verb that names no element
    obj: list[str] = []
    for word in words:
        low = word.lower()
        if low in _OBJECT_STOP:
            break
        if low in _DETERMINERS and not obj:
            continue
        obj.append(low)
        if len(obj) == 3:
            break
    object_text = " ".join(obj)
    actions = ["fill", "type"] if verb in _TYPING_VERBS else ["click"]
    terms: list[str] = []
    if verb in _DESTRUCTIVE:
        terms.append(verb)
    elif object_text and object_text not in _VAGUE and obj[0] not in _VAGUE:
        terms.append(object_text)
    return terms, actions


def _consent(text: str, out: CompiledRules) -> None:
    match = _CONSENT_RE.search(text)
    if not match:
        return
    phrase = match.group("before") or match.group("subject") or match.group("without") or ""
    terms, actions = _object_terms(phrase)
    if terms:
        out.add({"consent": {"match": terms, "actions": actions}})


def _sensitive(text: str, prohibited: bool, out: CompiledRules) -> None:
    if not _DATA_VERB_RE.search(text):
        return
    patterns = [name for pattern, name in DATA_KINDS if pattern.search(text)]
    if "api_key" in patterns and "private_key" in patterns and not re.search(r"\b(api|token)", text, _I):
        patterns.remove("api_key")
    if not patterns:
        return
    allow: list[str] = []
    destination = _DATA_DESTINATION_RE.search(text)
    if destination:
        allow = hosts_in(text[destination.end() :])
    if not prohibited and not allow:
        return  # "you may enter your password" states no restriction
    body: dict[str, Any] = {"patterns": list(dict.fromkeys(patterns))}
    if allow:
        body["allow_domains"] = allow
    out.add({"sensitive_data": body})


def _urls(text: str, prohibited: bool, out: CompiledRules) -> None:
    urls, paths, hosts = urls_in(text), paths_in(text), hosts_in(text)
    if not (urls or paths or hosts):
        return
    allow_words = _ALLOW_RE.search(text)
    exception = _EXCEPT_RE.search(text)
    if (allow_words and (not prohibited or exception)) or (prohibited and exception):
        if hosts:
            out.add({"domain_allow": hosts})
        return
    if not prohibited or not _NAV_RE.search(text):
        return
    deny_urls = []
    deny_hosts = []
    for url in urls:
        rest = re.sub(r"^https?://[^/?#]+", "", url, flags=_I)
        if rest.strip("/"):
            deny_urls.append(url)
        else:
            deny_hosts.append(re.sub(r"^https?://([^/:?#]+).*$", r"\1", url, flags=_I).lower())
    url_hosts = {re.sub(r"^https?://([^/:?#]+).*$", r"\1", u, flags=_I).lower() for u in urls}
    deny_hosts.extend(h for h in hosts if h not in url_hosts)
    if deny_urls or paths:
        out.add({"url_deny": [*deny_urls, *paths]})
    if deny_hosts:
        out.add({"domain_deny": list(dict.fromkeys(deny_hosts))})


def compile_rules(text: str) -> CompiledRules:
    """The rules one statement states plainly (validated), for its policy's `rules` list."""
    out = CompiledRules()
    prohibited = bool(PROHIBITION_RE.search(text))
    _consent(text, out)
    _sensitive(text, prohibited, out)
    if "sensitive_data" not in out.kinds:
        _urls(text, prohibited, out)
    return out
