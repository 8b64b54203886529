"""Personal information detection (KLUE 2.3 and the KISA de-identification guideline).

KLUE 2.3 removes sentences that contain personal information: e-mail addresses, URLs,
user mentions (@id), phone numbers, resident registration numbers, card numbers and
bank account numbers. One detector per kind; detectors run in a fixed order and mask
what they matched, so a phone number is not counted again as an account number.
Card numbers must have a known network's prefix and length and pass the Luhn check;
resident registration numbers must carry a real birth date and a valid sex/century
digit and not be a run of one or two repeated digits ("1010101010101"). Each of these
guards comes from a false positive seen in the NSMC crawl. Names are not detected:
public figures' names are not PII, and KLUE did not remove names.

``filter_pii`` is the ``pii`` stage: a sentence with any enabled kind is dropped with
reason ``pii`` and the kinds found in ``detail`` (e.g. ``email,url``).
"""

from __future__ import annotations

import re
from datetime import date

import pandas as pd

from pipelines.core.stage import StageResult, split_by_reason
from pipelines.quality.settings import PII_KINDS, PiiSettings

_D = r"(?<![\d])"  # not preceded by a digit
_ND = r"(?![\d])"  # not followed by a digit


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum used by payment card numbers."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _rrn_valid(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    yy, mm, dd, code = int(digits[:2]), int(digits[2:4]), int(digits[4:6]), int(digits[6])
    century = {
        1: 1900,
        2: 1900,
        3: 2000,
        4: 2000,
        5: 1900,
        6: 1900,
        7: 2000,
        8: 2000,
        9: 1800,
        0: 1800,
    }[code]
    try:
        date(century + yy, mm, dd)
    except ValueError:
        return False
    return not _digit_run(digits)


def _digit_run(digits: str) -> bool:
    """Keyboard noise such as "1010101010101" or "0707070707070": two digits or fewer."""
    return len(set(digits)) <= 2


# Issuer prefixes (IIN ranges) and lengths of the card networks used in Korea.
_CARD_NETWORKS = [
    (re.compile(r"4"), {13, 16, 19}),  # Visa
    (re.compile(r"5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)"), {16}),  # Mastercard
    (re.compile(r"3[47]"), {15}),  # American Express
    (re.compile(r"35(?:2[89]|[3-8]\d)"), set(range(16, 20))),  # JCB
    (re.compile(r"6(?:011|5|4[4-9])"), set(range(16, 20))),  # Discover
    (re.compile(r"62"), set(range(16, 20))),  # UnionPay
    (re.compile(r"3(?:0[0-5]|[689])"), set(range(14, 20))),  # Diners Club
    (re.compile(r"9"), {16}),  # Korean domestic cards (BC and others)
]


def _card_valid(match: re.Match[str]) -> bool:
    """A known network's prefix and length, and the Luhn checksum."""
    digits = re.sub(r"\D", "", match.group(0))
    known = any(p.match(digits) and len(digits) in lengths for p, lengths in _CARD_NETWORKS)
    return known and luhn_valid(digits)


def _phone_valid(match: re.Match[str]) -> bool:
    """Not a year range such as "1839-1842" (which looks like a 18xx nationwide number)."""
    text = match.group(0)
    m = re.fullmatch(r"(1[5-9]\d\d)-(\d{4})", text)
    if m:
        first, second = int(m.group(1)), int(m.group(2))
        if 0 < second - first < 200:
            return False
        following = match.string[match.end() : match.end() + 1]
        if following == "년":
            return False
    return True


def _account_valid(match: re.Match[str]) -> bool:
    text = match.group(0)
    digits = re.sub(r"\D", "", text)
    if not 10 <= len(digits) <= 14:
        return False
    # not a date range or a year-month-day
    return not re.fullmatch(r"(19|20)\d{2}[-.](0?[1-9]|1[0-2])[-.]\d{1,2}", text)


_ACCOUNT_WORDS = (
    r"(?:계좌|계좌번호|입금|송금|통장|은행|뱅크|농협|국민|신한|우리|하나|기업|카카오뱅크|토스)"
)

# (kind, pattern, validator) in the order they run; each masks its matches
DETECTORS: list[tuple[str, re.Pattern[str], object]] = [
    (
        "email",
        re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
        None,
    ),
    (
        "url",
        re.compile(
            r"(?:https?://|ftp://|www\.)[^\s<>\"']+"
            r"|(?<![\w@.])(?:[A-Za-z0-9-]+\.)+(?:com|net|org|kr|io|ly|me|be|tv|co|gl|to|jp|cn|info|biz)"
            r"(?:/[^\s<>\"']*)?(?![\w.])",
            re.I,
        ),
        None,
    ),
    # resident registration number: YYMMDD-SNNNNNN
    (
        "rrn",
        re.compile(
            _D + r"\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\s?[-–]?\s?[0-9]\d{6}" + _ND
        ),
        _rrn_valid,
    ),
    # card: 4-4-4-4 (or 4-6-5 for AmEx) with separators, or 13-19 contiguous digits; Luhn
    (
        "card",
        re.compile(
            _D + r"(?:\d{4}[ -]\d{4}[ -]\d{4}[ -]\d{1,7}|\d{4}[ -]\d{6}[ -]\d{5}|\d{13,19})" + _ND
        ),
        _card_valid,
    ),
    # Korean phone numbers: mobile 010-1234-5678, landline 02-123-4567, +82 10 ..., and
    # the 1544-1899 nationwide numbers (1588-1234); "1959-2018" is a year range, not a phone
    (
        "phone",
        re.compile(
            _D + r"(?:(?:\+82[ -]?|0)(?:1[016789]|2|[3-6][1-5]|70)[ .)-]?\d{3,4}[ .-]?\d{4}"
            r"|1(?:5[4-9]|6\d|8\d)\d-\d{4})" + _ND
        ),
        _phone_valid,
    ),
    # bank accounts: hyphenated digit groups of 10-14 digits, or 10-14 digits after an
    # account word ("계좌 110123456789")
    (
        "account",
        re.compile(
            r"(?<![\d-])\d{2,6}-\d{2,6}-\d{2,7}(?:-\d{1,3})?(?![\d]|-\d)"
            + "|"
            + _ACCOUNT_WORDS
            + r"[^\d\n]{0,10}\d{10,14}"
            + _ND
        ),
        _account_valid,
    ),
    # user mentions: @id or @닉네임 not part of an e-mail address; "@다크 나이트@" uses @ as
    # quotation marks (a closing @ right after a word), which is not a mention
    (
        "mention",
        re.compile(
            r"(?<![\w.@])@(?![^@\n]{0,30}[^\s,;@]@)[A-Za-z0-9_가-힣][A-Za-z0-9_.가-힣]{1,30}"
        ),
        None,
    ),
]


def find_pii(text: str, kinds: tuple[str, ...] | list[str] = PII_KINDS) -> list[tuple[str, str]]:
    """All ``(kind, matched text)`` in ``text``, for the enabled kinds, in detector order."""
    found: list[tuple[str, str]] = []
    masked = text
    for kind, pattern, validator in DETECTORS:
        if kind not in kinds:
            continue
        hits = []
        for m in pattern.finditer(masked):
            if validator is None or validator(m):
                hits.append(m)
        for m in reversed(hits):
            found.append((kind, text[m.start() : m.end()]))
            masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
    return found


def pii_kinds(text: str, kinds: tuple[str, ...] | list[str] = PII_KINDS) -> list[str]:
    """The kinds of PII found in ``text``, each once, in detector order."""
    seen: list[str] = []
    for kind, _ in find_pii(text, kinds):
        if kind not in seen:
            seen.append(kind)
    return seen


_ADDRESS_KINDS = ("email", "url", "mention")
_ADDRESS_HINT = re.compile(r"[@.]|www|https?:", re.I)


def mask_addresses(text: str) -> str:
    """``text`` with e-mail addresses, URLs and mentions removed (whatever the recipe's
    PII settings): the noise stage measures a sentence's Hangul share on this, so that
    the Latin letters of an address do not make a Korean sentence ``not_korean``."""
    if not _ADDRESS_HINT.search(text):
        return text
    for kind, pattern, _ in DETECTORS:
        if kind in _ADDRESS_KINDS:
            text = pattern.sub(" ", text)
    return text


_MAYBE = re.compile(
    r"[@\d]|www|https?|\.(?:com|net|org|kr|io|ly|me|be|tv|co|gl|to|jp|cn|info|biz)", re.I
)


def filter_pii(sentences: pd.DataFrame, settings: PiiSettings) -> StageResult:
    """Stage ``pii`` (sentences): drop sentences with PII, reason ``pii``, kinds in detail."""
    kinds = tuple(settings.kinds) if settings.enabled else ()
    details: list[str | None] = []
    for text in sentences["text"]:
        found = pii_kinds(text, kinds) if kinds and _MAYBE.search(text) else []
        details.append(",".join(found) or None)
    detail = pd.Series(details, index=sentences.index, dtype="object")
    reasons = detail.notna().map({True: "pii", False: None})
    flags = detail.map(lambda d: ",".join(f"pii:{k}" for k in d.split(",")) if d else None)
    return split_by_reason("pii", "sentence", sentences, reasons, detail, {"flags": flags})
