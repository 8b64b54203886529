"""Universal Dependencies treebanks in CoNLL-U (https://universaldependencies.org/format.html),
read for KLUE-DP's pseudo-parser (issue 57): UD Korean Kaist and GSD ship in
``data/demo/ud-korean`` (CC BY-SA 4.0).

Contract: :func:`read_conllu` gives one :class:`UdSentence` per sentence block (its
``sent_id`` and ``text`` comments, its tokens: id, form, lemma, UPOS, XPOS, head,
deprel, whether a space follows); multiword-token ranges (``1-2``) and empty nodes
(``1.1``) are skipped, as the basic tree does not use them. A malformed file (a token
line without ten columns, an id out of order, a head that is not a token of its
sentence, a sentence whose heads do not form one tree) is a :class:`UdError` naming the
file and the line, raised before any training.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError


class UdError(BenchforgeError, ValueError):
    """A CoNLL-U file that cannot be read; names the file and the line."""


@dataclass
class UdToken:
    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    head: int
    deprel: str
    space_after: bool = True


@dataclass
class UdSentence:
    sent_id: str
    text: str
    tokens: list[UdToken] = field(default_factory=list)
    line: int = 0  # the line of its first comment or token


def _text(path: Path) -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UdError(f"{path}:{line}: not UTF-8 (byte {exc.start})") from None


def _close(s: UdSentence, where: str, line: int) -> UdSentence:
    from pipelines.families.klue.dp_layout import tree_faults

    if not s.tokens:
        raise UdError(f"{where}:{line}: a sentence without tokens")
    n = len(s.tokens)
    for t in s.tokens:
        if not 0 <= t.head <= n:
            raise UdError(f"{where}:{s.line}: token {t.id}'s head {t.head} is not a token "
                          f"of the sentence (1..{n}, or 0)")  # fmt: skip
    faults = tree_faults([t.head for t in s.tokens])
    if faults:
        raise UdError(f"{where}:{s.line}: {s.sent_id or 'a sentence'}: the heads are not one "
                      f"tree ({', '.join(faults)})")  # fmt: skip
    if not s.text:
        s.text = "".join(t.form + (" " if t.space_after else "") for t in s.tokens).rstrip(" ")
    return s


def read_conllu(path: Path) -> list[UdSentence]:
    """The sentences of the CoNLL-U file at ``path`` (``.gz`` allowed); see the module
    docstring."""
    if not path.is_file():
        raise UdError(f"{path}: file not found")
    return parse_conllu(_text(path), str(path))


def parse_conllu(text: str, where: str = "<conllu>") -> list[UdSentence]:
    """The sentences of CoNLL-U ``text`` (``where`` names it in errors)."""
    out: list[UdSentence] = []
    s = UdSentence("", "")
    n = 0
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            if s.tokens or s.sent_id:
                out.append(_close(s, where, n))
            s = UdSentence("", "")
            continue
        if not s.line:
            s.line = n
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep and key.strip() == "sent_id":
                s.sent_id = value.strip()
            elif sep and key.strip() == "text":
                s.text = value.strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise UdError(f"{where}:{n}: {len(cols)} tab-separated columns, not CoNLL-U's 10")
        if "-" in cols[0] or "." in cols[0]:
            continue  # a multiword token's range or an empty node
        try:
            tid, head = int(cols[0]), int(cols[6])
        except ValueError:
            raise UdError(f"{where}:{n}: ID {cols[0]!r} and HEAD {cols[6]!r} must be "
                          "whole numbers") from None  # fmt: skip
        if tid != len(s.tokens) + 1:
            raise UdError(f"{where}:{n}: token ID {tid}, expected {len(s.tokens) + 1}")
        if not cols[1]:
            raise UdError(f"{where}:{n}: an empty FORM")
        misc = cols[9].split("|")
        s.tokens.append(UdToken(tid, cols[1], cols[2], cols[3], cols[4], head, cols[7],
                                "SpaceAfter=No" not in misc))  # fmt: skip
    if s.tokens:
        out.append(_close(s, where, n + 1))
    if not out:
        raise UdError(f"{where}: no sentence")
    return out


def to_record(s: UdSentence) -> dict:
    """A sentence as a JSON object (a corpus line: ``id``, ``text``, ``tokens`` as
    ``[form, upos, head, deprel, space_after]``)."""
    return {
        "id": s.sent_id,
        "text": s.text,
        "tokens": [[t.form, t.upos, t.head, t.deprel, t.space_after] for t in s.tokens],
    }


def from_record(record: dict, where: str = "<record>") -> UdSentence:
    """The sentence of a :func:`to_record` object (its tree checked as a file's is)."""
    try:
        tokens = [UdToken(i, str(f), "_", str(u), "_", int(h), str(d), bool(sp))
                  for i, (f, u, h, d, sp) in enumerate(record["tokens"], start=1)]  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise UdError(f"{where}: expected tokens as [form, upos, head, deprel, space_after] "
                      f"({exc!r})") from None  # fmt: skip
    s = UdSentence(str(record.get("id", "")), str(record.get("text", "")), tokens, 1)
    return _close(s, where, 1)
