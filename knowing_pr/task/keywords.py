"""Task description → ``KeywordSet`` (seeds 002/003, "KeywordSet and extractKeywordSet").

Three tiers, queried in priority order so that split components never drown the compound
the user meant (``before_request`` before ``before`` and ``request``):

- ``exact``: backtick-quoted identifiers (``\\`parse_config\\```), original and lowercase;
- ``compounds``: identifiers with structure (snake_case, CamelCase, dotted, ``a::b``), code
  patterns (``obj.method()``, ``Class.method``, ``pkg.mod_name``), the noun after a leading
  action verb when it is an identifier, and bigram joins of adjacent words
  ("blast radius" → ``BlastRadius``, ``blast_radius``);
- ``components``: the words split out of identifiers and the plain words of the text, stop
  words removed, abbreviations expanded (``cfg`` → ``config``), a light stem added
  ("payments" → ``payment``); priority terms (the noun after a leading verb) first, then
  the rest longest first.

An action verb ("add", "fix", "build", "test", …) is dropped only where it is an instruction:
the first word of a sentence or clause (after lead-in words such as "please" or "we should"),
a verb joined to such a verb ("debug and fix"), or the verb of an infinitive ("a flag to
disable caching"). Anywhere else it may name code ("build scripts" → ``BuildScripts``,
"cargo test" → ``test``) and is kept like any other word.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "ACTION_VERBS",
    "KeywordSet",
    "instruction_words",
    "extract_keywords",
    "is_compound",
    "light_stem",
    "split_identifier",
    "words_of",
]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: English stop words plus programming filler that names nothing in particular
STOP_WORDS = _word_set(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    etc even ever every few for from further had has have having he her here hers him his how i
    if in into is it its itself just let lets like may me might more most much must my no nor not
    now of off on once only or other our out over own same she should so some such than that the
    their them then there these they this those through to too under until up upon us use used
    uses using very via was we were what when where whether which while who whom why will with
    within without would yet you your e.g i.e eg ie vs per get gets got way ways thing things
    something anything everything nothing one two three first second new old
    func function functions method methods type types var val err value values class classes
    file files code line lines call calls called return returns make makes made need needs
    needed want wants should shouldn't doesn't don't isn't can't won't properly correctly
    instead still already always never sometimes currently now again when please
    """
)

#: a first word that states what to do; the noun after it is the target of the task
ACTION_VERBS = _word_set(
    """
    add adds added implement implements build create creates fix fixes fixed fixing refactor
    refactors update updates updated change changes changed remove removes removed delete
    deletes rename renames move moves support supports improve improves optimize optimise
    speed clean cleanup handle handles allow allows make ensure prevent avoid replace replaces
    rewrite introduce extend enable disable drop bump revert merge use document test tests
    simplify correct check raise raises return show hide expose deprecate port migrate
    debug trace find understand explain investigate integrate design write modify define
    configure generate calculate
    """
)

#: words that may come before the instruction verb of a clause ("please add", "we should fix")
_LEAD_IN = _word_set(
    "please we i you should must need needs want let lets can could how do also then first now just"
)
#: words that join a second instruction verb to the first ("debug and fix")
_JOINERS = frozenset({"and", "or", "then", "also"})
#: where a clause ends: sentence punctuation followed by a space, or a line break
_CLAUSE_BREAK = re.compile(r"[.!?;:]+(?=\s|$)|\n")

#: short forms developers type → the words code is named with
ABBREVIATIONS = {
    "ctx": "context",
    "cfg": "config",
    "conf": "config",
    "svc": "service",
    "db": "database",
    "repo": "repository",
    "auth": "authentication",
    "authn": "authentication",
    "authz": "authorization",
    "msg": "message",
    "req": "request",
    "res": "response",
    "resp": "response",
    "err": "error",
    "env": "environment",
    "fn": "function",
    "func": "function",
    "param": "parameter",
    "params": "parameters",
    "arg": "argument",
    "args": "arguments",
    "opts": "options",
    "impl": "implementation",
    "init": "initialize",
    "deps": "dependencies",
    "dep": "dependency",
    "pkg": "package",
    "dir": "directory",
    "tmp": "temporary",
    "attr": "attribute",
    "attrs": "attributes",
    "str": "string",
    "int": "integer",
    "num": "number",
    "idx": "index",
    "len": "length",
    "doc": "document",
    "docs": "documentation",
    "perf": "performance",
    "mem": "memory",
    "conn": "connection",
    "tx": "transaction",
    "txn": "transaction",
    "http": "request",
    "url": "address",
    "util": "utility",
    "utils": "utilities",
    "async": "asynchronous",
    "sync": "synchronize",
    "k8s": "kubernetes",
    "i18n": "internationalization",
    "cli": "command",
    "cmd": "command",
    "addr": "address",
    "gc": "garbage",
    "src": "source",
    "dst": "destination",
    "tpl": "template",
    "tmpl": "template",
}

_BACKTICK = re.compile(r"`([^`\n]{1,100})`")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
#: obj.method(), get_inlines(), QuerySet.annotate(
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\(")
#: ModelAdmin.get_inlines
_CLASS_DOT = re.compile(r"(?<![\w.])([A-Z]\w*(?:\.[A-Za-z_]\w*)+)")
#: django.utils.html.escape, config.load_file (an underscore on some side)
_DOTTED = re.compile(r"(?<![\w.])([a-z_]\w*(?:\.\w+)+)")
_PROSE_DOTS = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a", "et.al"})


@dataclass(frozen=True)
class KeywordSet:
    """Keywords by specificity tier (exact > compounds > components)."""

    exact: tuple[str, ...] = ()
    compounds: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    #: components that name the task's target (the noun after a leading verb)
    priority: tuple[str, ...] = field(default=())
    #: the action verbs dropped as instructions ("add", "fix"), lowercase, in text order
    instructions: tuple[str, ...] = field(default=())

    def primary(self) -> tuple[str, ...]:
        """Exact + compounds: queried first by the tiered channel."""
        return _unique((*self.exact, *self.compounds))

    def all(self) -> tuple[str, ...]:
        return _unique((*self.exact, *self.compounds, *self.components))

    def is_empty(self) -> bool:
        return not (self.exact or self.compounds or self.components)


def _unique(items: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return tuple(out)


def split_identifier(word: str) -> list[str]:
    """``parseHTTPResponse_v2.x`` → ``parse``, ``HTTP``, ``Response``, ``v``, ``2``, ``x``."""
    parts: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", word):
        if chunk:
            parts.extend(re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", chunk))
    return parts


def is_compound(word: str) -> bool:
    """snake_case, dotted, ``::`` or mixed-case identifiers (more than one part)."""
    core = word.strip("_")
    if any(sep in core for sep in ("_", ".", "::", "#")):
        return len(split_identifier(core)) > 1
    return len(split_identifier(core)) > 1 and not core.isupper()


@lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """A conservative English stemmer: plurals, -ing, -ed (``payments`` → ``payment``)."""
    w = word.lower()
    if len(w) <= 4:
        return w
    if w.endswith("ies") and len(w) > 5:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is", "ous")):
        return w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            stem = w[: -len(suffix)]
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "flsz":
                stem = stem[:-1]
            return stem
    return w


def _valid_identifier(text: str) -> bool:
    return bool(_IDENTIFIER.fullmatch(text)) and len(text) <= 100


def _backticked(text: str) -> list[str]:
    out: list[str] = []
    for raw in _BACKTICK.findall(text):
        candidate = raw.strip().removesuffix("()").strip()
        if _valid_identifier(candidate):
            out.extend((candidate, candidate.lower()))
    return out


def _code_patterns(text: str) -> list[str]:
    """Unambiguous code references in prose (method calls, Class.method, dotted_with_underscore)."""
    found: list[str] = []
    for match in _CALL.finditer(text):
        name = match.group(1)
        if name.lower() in _PROSE_DOTS or len(name) < 3:
            continue
        if "." in name or "_" in name or is_compound(name):
            found.append(name)
    for match in _CLASS_DOT.finditer(text):
        found.append(match.group(1).rstrip("."))
    for match in _DOTTED.finditer(text):
        dotted = match.group(1).rstrip(".")
        if dotted.lower() in _PROSE_DOTS or re.fullmatch(r"[\d.]+", dotted):
            continue
        if "_" in dotted:
            found.append(dotted)
    out: list[str] = []
    for name in found:
        out.extend((name, name.lower()))
    return out


def words_of(text: str) -> list[str]:
    """The identifier-like words of ``text`` in order (dots and ``::`` kept inside words)."""
    return [w.strip(".") for w in _WORD.findall(_BACKTICK.sub(" ", text)) if w.strip(".")]


def _is_filler(word: str) -> bool:
    lowered = word.lower()
    return lowered in STOP_WORDS or len(lowered) < 2 or lowered.isdigit()


def _clause_flags(words: list[str]) -> list[bool]:
    """Per word of one clause: is it an instruction verb (see the module docstring)?"""
    flags: list[bool] = []
    state = "lead"  # lead: before the clause's verb; verb: just after one; open: a verb may follow
    for word in words:
        lowered = word.lower()
        if state in ("lead", "open") and lowered in ACTION_VERBS:
            flags.append(True)
            state = "verb"
            continue
        flags.append(False)
        if lowered == "to" or (state == "verb" and lowered in _JOINERS):
            state = "open"
        elif not (state == "lead" and lowered in _LEAD_IN):
            state = "body"
    return flags


def instruction_words(text: str) -> list[tuple[str, bool]]:
    """The words of ``text`` (as ``words_of``), each with whether it is an instruction verb."""
    out: list[tuple[str, bool]] = []
    for clause in _CLAUSE_BREAK.split(_BACKTICK.sub(" ", text)):
        words = words_of(clause)
        out.extend(zip(words, _clause_flags(words), strict=True))
    return out


def _priority_target(flagged: list[tuple[str, bool]]) -> str | None:
    """The first word after a leading instruction verb that is neither filler nor a verb."""
    start = 0
    while start < len(flagged) and not flagged[start][1] and flagged[start][0].lower() in _LEAD_IN:
        start += 1
    if start >= len(flagged) or not flagged[start][1]:
        return None
    for word, _ in flagged[start + 1 :]:
        if not _is_filler(word) and word.lower() not in ACTION_VERBS:
            return word
    return None


def _bigrams(flagged: list[tuple[str, bool]]) -> list[str]:
    out: list[str] = []
    for (left, left_instruction), (right, right_instruction) in zip(flagged, flagged[1:], strict=False):
        pair = (left.lower(), right.lower())
        if left_instruction or right_instruction:
            continue
        if any(_is_filler(w) or not w.isalpha() for w in pair):
            continue
        if min(len(w) for w in pair) < 3 or max(len(w) for w in pair) < 4:
            continue
        out.append(pair[0].capitalize() + pair[1].capitalize())
        out.append(f"{pair[0]}_{pair[1]}")
    return out


def _expanded(component: str) -> list[str]:
    lowered = component.lower()
    out = [lowered]
    if lowered in ABBREVIATIONS:
        out.append(ABBREVIATIONS[lowered])
    stem = light_stem(lowered)
    if stem != lowered:
        out.append(stem)
    return out


def extract_keywords(text: str) -> KeywordSet:
    """The ``KeywordSet`` of a task description (seed 003's phases 1, 1.5, 2 and 3)."""
    exact = _unique(_backticked(text))
    compounds: list[str] = list(_code_patterns(_BACKTICK.sub(" ", text)))
    components: list[str] = []
    priority: list[str] = []
    flagged = instruction_words(text)
    target = _priority_target(flagged)
    if target is not None:
        if is_compound(target):
            compounds.extend((target, target.lower()))
        else:
            priority.extend(_expanded(target))
    for word, instruction in flagged:
        if word.lower() in _PROSE_DOTS or instruction:
            continue
        if is_compound(word):
            compounds.append(word)
            parts = split_identifier(word)
        else:
            parts = [word]
        for part in parts:
            if not _is_filler(part):
                components.extend(_expanded(part))
    for identifier in exact:
        components.extend(p for part in split_identifier(identifier) for p in _expanded(part))
    compounds.extend(_bigrams([(w, i) for w, i in flagged if "." not in w]))
    ordered = sorted(_unique(components), key=lambda c: (-len(c), c))
    primary = set(exact) | set(compounds)
    final_components = _unique([*priority, *ordered])
    return KeywordSet(
        exact=exact,
        compounds=tuple(c for c in _unique(compounds) if c not in exact),
        components=tuple(c for c in final_components if c not in primary and not _is_filler(c)),
        priority=_unique(priority),
        instructions=_unique([w.lower() for w, instruction in flagged if instruction]),
    )
