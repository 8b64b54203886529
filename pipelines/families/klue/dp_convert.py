"""UD Korean trees in KLUE-DP's conventions (issue 57, item 3): the pseudo-parser's
training data.

Three rules, each tested (``tests/unit/families/test_klue_dp_convert.py``):

1. **Words are eojeols.** UD Korean splits punctuation (and GSD some particles) off
   into tokens with ``SpaceAfter=No``; KLUE-DP's word is the space-separated eojeol,
   its punctuation a morpheme of it (``흘렸다.``). Tokens are merged up to each space;
   the merged word's head is the word of its *main* token's head: the token whose head
   lies outside the word (the root token first, then the last such token that is not
   punctuation, then the last such token).
2. **Heads come last** (KLUE-DP and the Sejong treebank are head-final: every word
   depends on a word to its right and the last word is the root). UD heads a
   coordination, a flat name, a fixed expression or an apposition by its *first*
   word; here every arc whose head stands before its dependent is rotated, the
   rightmost dependent first: the dependent takes its head's place (head and
   relation) and the old head depends on it, until no head precedes its word
   (``A와 B와 C를``: UD ``B -conj-> A``, ``C -conj-> A``; KLUE ``A -CNJ-> B -CNJ-> C``).
   A word the rotations cannot settle within ``n**2`` steps is attached to the next
   word and counted (``forced``).
3. **Labels from morphology** (:func:`klue_label`): the syntactic tag from the word's
   POS (noun-like NP, with a copula VNP, verb, adjective or a noun turned verb VP,
   adverb AP, determiner DP, interjection IP, a lone opening bracket or quote L, a
   closing one R, else X), the function tag from its last particle or ending (JKS SBJ,
   JKO OBJ, JKC and JKQ CMP, JKG MOD, JKB AJT, JC CNJ, ETM MOD) and, where the
   morphology leaves it open (a topic or auxiliary particle JX, a bare noun, a
   connective ending EC), from the UD relation (nsubj SBJ, obj OBJ, conj CNJ, ccomp
   and xcomp CMP, obl and advcl AJT; a connective ending otherwise AJT).

The morphology is MeCab's (:mod:`.dp_morph`) on the word forms, the same as at
pseudo-parsing time, not the treebank's own XPOS (KAIST tags in Kaist).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.families.klue.dp_morph import Word, analyse
from pipelines.families.klue.ud import UdSentence

NOUNISH = frozenset(["NNG", "NNP", "NNB", "NP", "NR", "SN", "SL", "SH", "XR", "XPN", "NF"])
VERBISH = frozenset(["VV", "VA", "VX", "XSV", "XSA", "ETN"])
SYMBOLS = frozenset(["SF", "SP", "SS", "SE", "SO", "SW"])
OPENING = set("\"'“‘«「『([{<〈《【")
PARTICLE_FUNCTION = {"JKS": "SBJ", "JKO": "OBJ", "JKC": "CMP", "JKQ": "CMP", "JKG": "MOD",
                     "JKB": "AJT", "JC": "CNJ", "ETM": "MOD"}  # fmt: skip
RELATION_FUNCTION = {"nsubj": "SBJ", "csubj": "SBJ", "dislocated": "SBJ", "obj": "OBJ",
                     "iobj": "AJT", "conj": "CNJ", "ccomp": "CMP", "xcomp": "CMP",
                     "obl": "AJT", "advcl": "AJT"}  # fmt: skip


@dataclass
class KlueTree:
    """One sentence in KLUE-DP's conventions: words, heads (0 the root), labels."""

    sent_id: str
    text: str
    words: list[Word]
    heads: list[int]
    labels: list[str]
    forced: int = 0  # words attached to the next word by rule 2's fallback


def syntactic_tag(word: Word) -> str:
    """Rule 3's syntactic tag (module docstring)."""
    core = [(m, t) for m, t in zip(word.morphemes, word.tags, strict=True) if t not in SYMBOLS]
    if not core:
        first = word.form[:1]
        if first in OPENING and len(word.form) == 1:
            return "L"
        if len(word.form) == 1 and word.form in "\"'”’»」』)]}>〉》】":
            return "R"
        return "X"
    tags = {t for _, t in core}
    if tags & {"VCP", "VCN"}:
        return "VNP"
    if tags & VERBISH:
        return "VP"
    head = core[0][1]
    if head in NOUNISH:
        return "NP"
    if head in ("MAG", "MAJ"):
        return "AP"
    if head == "MM":
        return "DP"
    if head == "IC":
        return "IP"
    return "X"


def function_tag(word: Word, relation: str | None) -> str | None:
    """Rule 3's function tag, or None."""
    core = [t for t in word.tags if t not in SYMBOLS]
    if not core:
        return None
    last = core[-1]
    if last in PARTICLE_FUNCTION:
        return PARTICLE_FUNCTION[last]
    base = (relation or "").split(":")[0]
    if last == "JX" or last in NOUNISH:
        return RELATION_FUNCTION.get(base) if base != "advcl" else "AJT"
    if last == "EC":
        return RELATION_FUNCTION.get(base, "AJT") if base != "obj" else "OBJ"
    if last == "EF" and base in ("ccomp", "xcomp"):
        return "CMP"
    return None


def klue_label(word: Word, relation: str | None) -> str:
    """The KLUE-DP label of ``word`` whose UD relation is ``relation`` (rule 3)."""
    syntactic = syntactic_tag(word)
    if syntactic in ("L", "R", "DP", "IP"):
        return syntactic
    function = function_tag(word, relation)
    if syntactic == "AP" and function not in ("MOD", "AJT", "SBJ", "OBJ", "CMP"):
        function = None
    return f"{syntactic}_{function}" if function else syntactic


def merge_eojeols(s: UdSentence) -> tuple[list[str], list[int], list[str]]:
    """Rule 1: the sentence's words (eojeols), their heads and the UD relation of each
    word's main token."""
    groups: list[list[int]] = [[]]
    for t in s.tokens:
        groups[-1].append(t.id)
        if t.space_after:
            groups.append([])
    groups = [g for g in groups if g]
    word_of = {tid: w for w, g in enumerate(groups, start=1) for tid in g}
    forms, heads, relations = [], [], []
    for g in groups:
        tokens = [s.tokens[i - 1] for i in g]
        forms.append("".join(t.form for t in tokens))
        outside = [t for t in tokens if t.head == 0 or word_of[t.head] != word_of[t.id]]
        main = (next((t for t in outside if t.head == 0), None)
                or next((t for t in reversed(outside) if t.upos != "PUNCT"), None)
                or (outside[-1] if outside else tokens[-1]))  # fmt: skip
        heads.append(0 if main.head == 0 else word_of[main.head])
        relations.append(main.deprel)
    return forms, heads, relations


def head_final(heads: list[int], relations: list[str]) -> tuple[list[int], list[str], int]:
    """Rule 2: the heads rotated until none precedes its word; (heads, relations,
    words forced onto the next word)."""
    heads, relations = list(heads), list(relations)
    n = len(heads)
    for _ in range(n * n + 1):
        left = [d for d in range(1, n + 1) if 0 < heads[d - 1] < d]
        if not left:
            break
        d = left[-1]  # the rightmost first: a coordination becomes a chain (A -> B -> C)
        h = heads[d - 1]
        heads[d - 1], relations[d - 1], heads[h - 1], relations[h - 1] = (
            heads[h - 1], relations[h - 1], d, relations[d - 1])  # fmt: skip
    forced = 0
    for d in range(1, n + 1):
        if 0 < heads[d - 1] < d or (heads[d - 1] == 0 and d != n):
            heads[d - 1] = d + 1 if d < n else 0
            forced += 1
    if n:
        heads[n - 1] = 0
    return heads, relations, forced


def convert(s: UdSentence) -> KlueTree:
    """The UD sentence in KLUE-DP's conventions (rules 1 to 3)."""
    forms, heads, relations = merge_eojeols(s)
    heads, relations, forced = head_final(heads, relations)
    text = " ".join(forms)
    words = analyse(text)
    labels = [klue_label(w, r) for w, r in zip(words, relations, strict=True)]
    return KlueTree(s.sent_id, text, words, heads, labels, forced)
