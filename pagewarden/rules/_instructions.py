"""Detect instruction-like text aimed at an agent, and whether the goal supports an action.

`instruction_signals` scores text by weighted phrase families (overriding earlier
instructions, addressing an AI, hijacking the task, urgency, asking for credentials or
for data to be sent somewhere). One strong phrase, or two families of weaker ones, make
text instruction-like. The families are English regular expressions here, and structures
filled from the lexicon for the other languages (`_multilingual`), on text folded first
(`_normalise`: hidden characters, tag text, look-alike letters); what the folding had to undo
is a family of its own (``obfuscated``), and so is an instruction in another language than
the text around it (``foreign_language``). `goal_supports` tells whether the user's goal names what the
action acts on, so that a legitimate action is not mistaken for a followed injection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pagewarden.rules._multilingual import WEIGHTS, foreign_sentence, multilingual_families
from pagewarden.rules._normalise import fold, fold_with_evasion, match_key

__all__ = [
    "INSTRUCTION_THRESHOLD",
    "InstructionSignals",
    "goal_supports_text",
    "goal_supports_url",
    "instruction_signals",
    "reasoning_cites_page",
    "reasoning_follows_page",
    "significant_tokens",
    "unjoin",
]

INSTRUCTION_THRESHOLD = 0.8

_AI = r"(?:ai|a\.i\.|llm|language\s+model|assistant|agent|bot|chat\s*bot|gpt|model|copilot)s?"
_VERBS = (
    r"(?:go|click|visit|navigate|open|follow|type|enter|paste|send|copy|submit|create|add|upload|download|run"
    r"|execute|log\s*in|sign\s*in|post|reply|write|delete|remove|grant|invite|transfer|share)"
)
#: Who judges the agent: a guard, judge, safety layer (`judge/_steering.py` has the same words).
_GUARD = (
    r"(?:(?:ai|llm|safety|security|agent)\s+(?:judge|guard|guardrail|checker|monitor)s?|guardrails?|pagewarden"
    r"|(?:safety|security)\s+(?:system|model|layer|reviewer|filter|classifier)s?)"
)
#: (family, weight, patterns). Families of weight 1.0 are "strong": one alone is enough.
_FAMILIES: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    (
        "override",
        1.0,
        (
            r"\b(?:ignore|disregard|forget|override|skip|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*"
            r"(?:\w+\s+)?(?:previous|prior|above|earlier|preceding|former|original|other|existing|user'?s?|your)\s+"
            r"(?:\w+\s+)?(?:instructions?|prompts?|directions?|rules|tasks?|goals?|guidelines|messages?|text|requests?|orders?)",
            r"\bignore\s+(?:all\s+)?(?:the\s+)?text\s+(?:below|above)",
            r"\bstop\s+processing\b",
            r"\bfocus\s+on\s+the\s+objective\b",
            r"\bnew\s+(?:system\s+)?instructions?\s*:",
            r"\bsystem\s+(?:prompt|override)\b",
            r"\byou\s+are\s+now\s+(?:a|an|in)\b",
            r"#objective[:\-]",
            r"\bobjective\s*:\s*(?:you|ignore|go|click|open|visit)\b",
        ),
    ),
    (
        "address_ai",
        1.0,
        (
            rf"\b(?:attention|note|message|instructions?|notice|important|reminder)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+)?"
            rf"(?:automated\s+|autonomous\s+)?{_AI}\b",
            rf"\b(?:dear|hey|hello|hi)\s+(?:the\s+)?{_AI}\b",
            rf"\bif\s+you\s+are\s+(?:an?\s+)?(?:automated\s+|autonomous\s+)?{_AI}\b",
            r"\b(?:ai|llm|automated|autonomous|browsing|web)\s+(?:agents?|assistants?)\b[^.:\n]{0,40}:",
            r"\b(?:ai|llm|automated|autonomous|browsing|web)\s+agents?\s*,",
        ),
    ),
    (
        # Text that speaks to the guard judging the agent, or claims the guard's or the user's
        # approval in their stead: no page has a reason to (a forged "pagewarden" box, a "note to
        # the safety judge", "this link is pre-approved").
        "address_guard",
        1.0,
        (
            rf"\b(?:to|for|dear|hey|attention|note|message|instructions?)\s+(?:the\s+|any\s+|all\s+|your\s+)?{_GUARD}\b",
            rf"\b(?:tell|instruct|inform)\s+(?:the\s+|your\s+)?{_GUARD}\b",
            r"\bpagewarden\b[^.\n]{0,60}\b(?:approved|allowed|verified|authori[sz]ed|safe|permitted|cleared)\b",
            r"\b(?:this|the)\s+(?:link|action|step|click|operation|download)\s+(?:is|was|has\s+been)\s+(?:already\s+)?"
            r"(?:pre[-\s]?approved|verified(?:\s+as)?\s+safe|whitelisted|allow[-\s]?listed)\b",
            r"\b(?:is|was|has\s+been)\s+(?:already\s+)?(?:pre[-\s]?approved|approved|authori[sz]ed|verified(?:\s+as)?\s+"
            rf"safe|whitelisted|cleared)\s+by\s+(?:the\s+|your\s+)?(?:user|{_GUARD}|(?:ai\s+)?agent|assistant)\b",
            r"\b(?:user|owner|admin(?:istrator)?|operator)\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed|"
            r"confirmed|allowed)\s+(?:this|the)\s+(?:action|step|click|operation|link)\b",
            r"\b(?:report|classify|mark|answer)\s+(?:this|it|the\s+action)\s+as\s+(?:safe|benign|harmless|compliant|"
            r"approved|allowed)\b",
        ),
    ),
    (
        "hijack",
        1.0,
        (
            r"\b(?:in\s+order\s+to|to)\s+(?:complete|finish|accomplish|fulfil+|continue)\s+(?:your|the|this)\s+"
            r"(?:task|request|objective|goal)",
            r"\brequired\s+to\s+complete\s+(?:your|the)\s+task",
            r"\b(?:functionality|page|feature|button|form|content)\s+has\s+(?:been\s+)?moved\b",
            rf"\byou\s+(?:must|have\s+to|need\s+to|are\s+required\s+to)\s+(?:first\s+|now\s+|immediately\s+)?{_VERBS}\b",
            r"\bbefore\s+(?:doing\s+anything\s+else|you\s+(?:do\s+anything|continue|proceed)|proceeding)\b",
        ),
    ),
    (
        # A field or text that asks the agent to reveal its task, goal or instructions.
        "goal_reveal",
        1.0,
        (
            r"\b(?:type|enter|describe|write|paste|tell\s+us|share|state|provide|input|copy)\s+(?:in\s+|here\s+)?"
            r"(?:\w+\s+){0,3}(?:task|goal|objective|instructions?|prompt|request|mission)s?\s+"
            r"(?:that\s+)?(?:you(?:'re|\s+are|\s+were|\s+have\s+been)\s+"
            r"(?:asked|told|given|instructed|assigned|trying|working\s+on|doing|here\s+to))",
            r"\b(?:your|the\s+user'?s?)\s+(?:original|current|full|exact|complete|whole|actual|entire|system)\s+"
            r"(?:task|goal|objective|instructions?|prompt|request|mission)s?\b",
            r"\bwhat\s+(?:were\s+you|are\s+you|have\s+you\s+been)\s+(?:asked|told|instructed|assigned)\s+to\b",
            r"\b(?:task|goal|objective|instructions?|prompt)s?\s+(?:you\s+(?:were|are|have\s+been)\s+"
            r"(?:asked|told|given|instructed|assigned)|(?:given|assigned)\s+to\s+you)\b",
        ),
    ),
    (
        "mention_ai",
        0.5,
        (
            r"\b(?:ai|llm)\s+(?:agents?|assistants?|models?)\b",
            r"\b(?:assistant|agent)\s*:\s",
            # a sentence, or a postscript, that opens by calling the assistant or agent
            r"(?:^|[.!?;]\s+|\bp\.?\s?s\.?\s+)(?:dear\s+)?(?:assistant|agent)\s*,\s",
        ),
    ),
    (
        "dictation",
        0.6,
        (
            r"\b(?:post|type|write|reply|comment|enter|paste|send)\s+(?:exactly\s+|only\s+)?(?:this|the\s+following)\s+"
            r"(?:text|message|comment|words?|reply|answer)\b",
            r"\b(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:exactly\s+)?['\"“]",
        ),
    ),
    (
        "phishing",
        0.5,
        (
            r"\bsession\s+(?:has\s+)?(?:expired|timed\s+out)\b",
            r"\b(?:sign|log)\s*(?:in|on)\s+again\b",
            r"\bverify\s+(?:your\s+)?(?:account|identity|session|login|email)\b",
            r"\bre-?authenticate\b",
            r"\baccount\s+(?:has\s+been\s+)?(?:suspended|locked|disabled)\b",
        ),
    ),
    (
        "urgency",
        0.4,
        (
            r"\b(?:urgent|critical|attention|important|warning|alert)\b\s*[:!]",
            r"\bit\s+is\s+(?:critical|crucial|required|mandatory|essential|vital|imperative)\b",
            r"\b(?:immediately|right\s+now|asap)\b",
        ),
    ),
    (
        "act_on_link",
        0.4,
        (
            r"\b(?:click|visit|go\s+to|navigate\s+to|open|follow|tap)\s+(?:on\s+)?"
            r"(?:this|the\s+following|that|the\s+link|here)\b",
        ),
    ),
    (
        "obligation",
        0.3,
        (
            r"\b(?:you|the\s+user)\s+(?:must|should|need\s+to|have\s+to)\b",
            r"\bmust\s+(?:post|type|enter|write|reply|comment|send|paste|click|open|visit)\b",
        ),
    ),
    (
        "credentials",
        0.6,
        (
            r"\b(?:enter|type|provide|paste|submit|send|share|confirm|verify|re-?enter|input)\s+"
            r"(?:your\s+|the\s+|an?\s+|admin\s+)*(?:password|passcode|credentials?|"
            r"(?:access\s+|deploy\s+|api\s+|auth\s+|personal\s+)?tokens?|api\s+keys?|ssh\s+keys?|"
            r"secret|credit\s+card|card\s+number|cvv|login|one[-\s]time\s+code|otp|2fa\s+code)",
            r"\b(?:create|generate|add)\s+(?:a\s+|an\s+|new\s+)*(?:deploy|access|api|personal)\s+(?:token|key)",
        ),
    ),
    (
        "exfiltrate",
        0.6,
        (
            r"\b(?:send|post|forward|upload|copy|paste|email|leak|transmit)\s+(?:it|them|this|that|the\s+\w+|your\s+\w+)\s+"
            r"(?:to|into|at)\b",
            # … whatever it is, however many words name it, to an e-mail address
            r"\b(?:send|post|forward|upload|email|e-mail|leak|transmit)\s+(?:[\w'-]+\s+){0,8}?(?:to|at)\s+"
            r"[\w.+-]+@[\w-]+(?:[.\s][\w-]+)*?\.[a-z]{2,}\b",  # (hyphens read as spaces: `unjoin`)
            r"\binclude\s+(?:it|them|the\s+\w+)\s+in\s+the\s+(?:url|link|address|query)",
            r"\b(?:append|add)\s+(?:it|the\s+\w+)\s+to\s+the\s+(?:url|link)",
        ),
    ),
)
_STRONG = frozenset(name for name, weight, _ in _FAMILIES if weight >= 1.0)
_COMPILED = tuple(
    (name, weight, re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE))
    for name, weight, patterns in _FAMILIES
)
_FOLLOWING = re.compile(
    r"\b(?:as\s+(?:instructed|requested|told|directed)\s+(?:by|in)\s+the\s+(?:page|comment|post|note|issue|message|banner|pop-?up)"
    r"|the\s+(?:page|comment|post|note|issue|banner|pop-?up)\s+(?:says|tells\s+me|asks\s+me|instructs|requires)"
    r"|(?:i|we)\s+(?:must|have\s+to)\s+(?:first\s+)?(?:go|click|visit)\s+.*\b(?:has\s+moved|objective))",
    re.IGNORECASE,
)


#: Things on a page an agent may cite as its reason (pop-ups, banners, comments, posts, …).
_PAGE_THING = (
    r"(?:pop-?ups?|popups?|banners?|dialogs?|modals?|overlays?|notices?|notifications?|alerts?|ads?|adverts?"
    r"|advertisements?|comments?|posts?|notes?|messages?|replies|reply|page|site|box|prompts?|windows?|announcements?"
    r"|instructions?|text|link|description|issue|thread|review|widget|sidebar|tooltip|toast)"
)
_CITES = re.compile(
    r"\b(?:according\s+to|as\s+(?:per|instructed|requested|told|directed|stated|asked|said|mentioned|described|"
    r"explained|indicated|suggested|shown|noted)(?:\s+(?:by|in|on))?|per|following|based\s+on|prompted\s+by)\s+"
    rf"(?:the|this|that|a|an|its|their)\s+(?:[\w'-]+\s+){{0,2}}{_PAGE_THING}\b"
    rf"|\b{_PAGE_THING}(?:'s)?\s+(?:(?:also|now|clearly|here)\s+)?(?:says?|said|asks?|asked|tells?|told|instructs?|instructed|"
    r"wants?|wanted|requires?|required|requests?|requested|states?|stated|mentions?|mentioned|suggests?|suggested|"
    r"indicates?|indicated|claims?|claimed|directs?|directed|explains?|explained|recommends?|recommended|warns?|"
    r"warned|urges?|urged|prompts?|prompted|notes?|noted|informs?|informed|points?\s+(?:me\s+)?to|reads?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class InstructionSignals:
    """How instruction-like a text is: score in [0, 1], the families and phrases that hit."""

    score: float
    families: tuple[str, ...]
    phrases: tuple[str, ...]

    @property
    def instruction_like(self) -> bool:
        """Whether the text reads as instructions aimed at an agent."""
        return self.score >= INSTRUCTION_THRESHOLD

    @property
    def strong(self) -> bool:
        """Whether a strong family hit (overriding, addressing an AI, hijacking the task).

        Content the site itself shows must be strong to count; in untrusted regions (user
        content, hidden text, pop-ups) reaching the threshold is enough.
        """
        return bool(set(self.families) & _STRONG)


_NONE = InstructionSignals(0.0, (), ())


_fold = fold
_JOINERS = re.compile(r"(?<=\w)[-+_](?=\w)")


def unjoin(text: str) -> str:
    """`text` with '-', '+' and '_' between word characters read as spaces: injections in URLs
    use them for spaces (…#OBJECTIVE:-You-MUST-…), compounds ("KI-Agent") read as words."""
    return _JOINERS.sub(" ", text)
#: Weights of the families that are not phrasing: what folding undid, a change of language.
_OBFUSCATED, _FOREIGN = 0.4, 0.3


@lru_cache(maxsize=2048)
def instruction_signals(text: str) -> InstructionSignals:
    """Score `text` for instructions aimed at an agent (any lexicon language)."""
    if not text or len(text) < 4:
        return _NONE
    text, evasion = fold_with_evasion(text)
    text = unjoin(text)
    score = 0.0
    families: list[str] = []
    phrases: list[str] = []
    spans: list[tuple[int, int]] = []
    if len(text) >= 8:
        for name, weight, pattern in _COMPILED:
            match = pattern.search(text)
            if match:
                families.append(name)
                phrases.append(match.group(0)[:80])
                spans.append(match.span())
                score += weight
    for name, phrase, span in multilingual_families(text):
        if name not in families:
            families.append(name)
            phrases.append(phrase)
            spans.append(span)
            score += WEIGHTS[name]
    if evasion:
        families.append("obfuscated")
        undone = evasion.tag_text or " ".join(evasion.mixed_words) or "hidden characters inside words"
        phrases.append(undone[:80])
        score += _OBFUSCATED
    # Only where it can change the outcome (the weaker families alone).
    if 0 < score < 1.0 and len(text) >= 40 and any(foreign_sentence(text, span) for span in spans[:4]):
        families.append("foreign_language")
        phrases.append("an instruction in another script or language than the text around it")
        score += _FOREIGN
    return InstructionSignals(min(1.0, round(score, 3)), tuple(families), tuple(phrases))


def reasoning_follows_page(reasoning: str | None) -> bool:
    """Whether the agent's own reasoning says it is doing what the page told it to."""
    return bool(reasoning) and bool(_FOLLOWING.search(reasoning or ""))


def reasoning_cites_page(reasoning: str | None) -> bool:
    """Whether the agent's reasoning gives something the page says as its reason, in any
    phrasing ("the pop-up says …", "according to the banner …", "as the comment asks …").

    A weaker signal than `reasoning_follows_page`: the guard uses it only together with what
    the action does (leaves the site, changes state, types text the goal does not hold).
    """
    return bool(reasoning) and bool(_CITES.search(reasoning or ""))


_STOPWORDS = frozenset(
    """
    a an the and or of to in on at for from by with into onto
    this that these those it its is are be was were been my your our their
    his her we you i me us them they he she here there please then than
    so as if not no do does did done can could should would will shall may
    might must have has had get got go goes make made new link click button page
    site url http https www com org net html php via using use up down all
    any some
    """.split()  # noqa: SIM905
)
_TOKEN = re.compile(r"[a-z0-9]+")


def _stem(token: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)]
    return token


_WORD = re.compile(r"[^\W_]+")
_WIDE_RUN = re.compile("([\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+)")


def _words(folded: str) -> list[str]:
    """Words of a lower-cased text that is not plain ASCII: accents removed (`match_key`), and
    runs of Chinese, Japanese or Korean, which have no spaces, as pairs of characters."""
    from pagewarden.rules._lexicon import lexicon

    other_stopwords = lexicon().function_words
    out: list[str] = []
    for word in _WORD.findall(folded):
        for i, part in enumerate(_WIDE_RUN.split(word)):
            if i % 2:  # a wide run
                out += [part[j : j + 2] for j in range(max(1, len(part) - 1))]
            elif part and (part.isascii() or (key := match_key(part)) not in other_stopwords):
                out.append(part if part.isascii() else key)
    return out


@lru_cache(maxsize=4096)
def significant_tokens(text: str) -> frozenset[str]:
    """Lower-cased, lightly stemmed content words of `text` (in any script: see `_words`)."""
    folded = _fold(text).lower()
    words = _TOKEN.findall(folded) if folded.isascii() else _words(folded)
    return frozenset(_stem(w) for w in words if w not in _STOPWORDS and len(w) >= 2)


def goal_supports_text(goal: str, text: str, *, min_overlap: float = 0.5) -> bool:
    """Whether `goal` names `text` (an element label or typed value)."""
    if not goal or not text:
        return False
    folded_goal = _fold(goal).lower()
    folded = _fold(text).lower().strip()
    if len(folded) >= 3 and folded in folded_goal:
        return True
    tokens = significant_tokens(text)
    if not tokens:
        return False
    goal_tokens = significant_tokens(goal)
    shared = tokens & goal_tokens
    return len(shared) / len(tokens) >= min_overlap


def goal_supports_url(goal: str, host: str, path: str = "", *, same_site: bool = False) -> bool:
    """Whether `goal` names the destination: its path on this site, or another site's host.

    For a destination on the site the agent is already on, naming the host says nothing
    (the goal names the site it works on), so only the path counts. For another site the
    host must be named: a path alone ("/manual") is a word an attacker can put in any URL.
    """
    if not goal:
        return False
    folded = goal.lower()
    if not same_site:
        return bool(host) and (host in folded or host.removeprefix("www.") in folded)
    clean = path.strip("/").lower()
    return len(clean) >= 4 and clean in folded
