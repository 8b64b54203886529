"""The release licence of a rebuilt dataset, resolved from its sources' licences.

A rebuilt dataset is an adaptation of every source it draws text from, so each source's
licence limits the licences the release may carry. ``RELEASES`` says, per source licence
(SPDX identifiers), which release licences it allows:

- CC0 1.0 (public domain dedication) allows any release;
- CC BY, MIT, Apache 2.0 and BSD allow any release that keeps their attribution or
  notice, so not CC0; MIT, Apache 2.0 and BSD also allow a release under themselves, and a
  release whose sources all carry one of them keeps it (``PERMISSIVE``);
- CC BY-SA 3.0 and 4.0 allow only CC BY-SA 4.0 (share-alike: BY-SA 3.0 adaptations may
  use a later version, CC BY-SA 4.0 section 3.b);
- CC BY-NC 4.0 allows the non-commercial licences CC BY-NC 4.0 and CC BY-NC-SA 4.0;
  CC BY-NC-SA 4.0 only itself; so NC never enters a permissive or BY-SA release;
- ``LicenseRef-KMOU-NER-NC`` (the KMOU NER corpus: MIT terms for non-commercial use
  only; SPDX has no identifier for it) allows the non-commercial releases, as CC BY-NC;
- ``LicenseRef-KR-Unprotected-Works`` (Korean text the Copyright Act leaves
  unprotected, Article 7: the constitution, laws and bills, court rulings, public
  notices) allows any release, as CC0 does;
- the NoDerivatives licences (CC BY-ND, CC BY-NC-ND) allow no release at all: an
  adapted dataset may not be shared (CC BY-ND 4.0 section 2.a.1.B).

:func:`resolve` takes the sources' licences and the release licence a recipe asks for
(``export.license``, optional) and returns the release licence (the sources' own when
they all carry one ``PERMISSIVE`` licence, else the most permissive one every source
allows, in ``PREFERENCE`` order, when the recipe names none) or raises
:class:`LicenceError` naming the sources that forbid it. The recipe check runs it at
load, before any work. This table is a practical summary for a data steward, not legal
advice: the card says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipelines.core.errors import BenchforgeError

ANY = "any"
NOT_CC0 = "any but CC0"

PREFERENCE = ("CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0")
_ATTRIBUTED = {"CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0"}
# a permissive software licence is kept as the release's when every source has it
# (issue 54: KoBBQ, MIT, was released as CC BY 4.0 while its rows said MIT)
PERMISSIVE = ("MIT", "Apache-2.0", "BSD-3-Clause")

RELEASES: dict[str, frozenset[str]] = {
    "CC0-1.0": frozenset(PREFERENCE + PERMISSIVE),
    **dict.fromkeys(("CC-BY-2.0", "CC-BY-3.0", "CC-BY-4.0"), frozenset(_ATTRIBUTED)),
    **{lic: frozenset(_ATTRIBUTED | {lic}) for lic in PERMISSIVE},
    "CC-BY-SA-3.0": frozenset({"CC-BY-SA-4.0"}),
    "CC-BY-SA-4.0": frozenset({"CC-BY-SA-4.0"}),
    "CC-BY-NC-4.0": frozenset({"CC-BY-NC-4.0", "CC-BY-NC-SA-4.0"}),
    "CC-BY-NC-SA-4.0": frozenset({"CC-BY-NC-SA-4.0"}),
    "LicenseRef-KMOU-NER-NC": frozenset({"CC-BY-NC-4.0", "CC-BY-NC-SA-4.0"}),
    "LicenseRef-KR-Unprotected-Works": frozenset(PREFERENCE + PERMISSIVE),
    "CC-BY-ND-4.0": frozenset(),
    "CC-BY-NC-ND-4.0": frozenset(),
}

_WHY = {
    "CC-BY-SA-3.0": "share-alike: adaptations only under CC BY-SA 4.0",
    "CC-BY-SA-4.0": "share-alike: adaptations only under CC BY-SA 4.0",
    "CC-BY-NC-4.0": "non-commercial: adaptations only under a non-commercial licence",
    "CC-BY-NC-SA-4.0": "non-commercial share-alike: adaptations only under CC BY-NC-SA 4.0",
    "LicenseRef-KMOU-NER-NC": "MIT terms for non-commercial use only: a non-commercial release",
    "CC-BY-ND-4.0": "no derivatives: an adapted dataset may not be shared at all",
    "CC-BY-NC-ND-4.0": "no derivatives: an adapted dataset may not be shared at all",
}


class LicenceError(BenchforgeError, ValueError):
    """The sources' licences allow no release, or not the one the recipe asks for."""


@dataclass(frozen=True)
class Resolution:
    """The release licence and why: ``governing`` lists the sources that leave no more
    permissive choice (empty when every source allows CC0)."""

    release: str
    governing: tuple[str, ...]
    declared: bool  # named by the recipe (True) or derived (False)

    def explain(self) -> str:
        how = "named by the recipe's `export.license`" if self.declared else "derived"
        if not self.governing:
            return f"{how}; every source allows it"
        return f"{how}; governed by {', '.join(self.governing)}"


def known(licence: str) -> bool:
    return licence in RELEASES


def resolve(sources: dict[str, str], declared: str | None = None) -> Resolution:
    """The release licence for ``sources`` (corpus name -> SPDX licence), or
    :class:`LicenceError` naming each source that forbids it."""
    unknown = {name: lic for name, lic in sources.items() if lic not in RELEASES}
    if unknown:
        raise LicenceError(
            "unknown licence "
            + ", ".join(f"{lic!r} (corpus {name})" for name, lic in sorted(unknown.items()))
            + f"; benchforge knows {', '.join(sorted(RELEASES))} (SPDX identifiers)"
        )
    if declared is not None:
        if declared not in PREFERENCE + PERMISSIVE:
            raise LicenceError(
                f"export.license {declared!r} is not a release licence benchforge can check; "
                f"choose one of {', '.join(PREFERENCE + PERMISSIVE)}"
            )
        refusing = _refusing(sources, declared)
        if refusing:
            raise LicenceError(f"export.license {declared} is not allowed: {refusing}")
        return Resolution(declared, _governing(sources, declared), True)
    own = set(sources.values())
    if len(own) == 1 and (only := own.pop()) in PERMISSIVE:  # MIT sources: an MIT release
        return Resolution(only, _governing(sources, only), False)
    for release in PREFERENCE:
        if not _refusing(sources, release):
            return Resolution(release, _governing(sources, release), False)
    raise LicenceError(
        "the sources' licences allow no common release licence: "
        + "; ".join(
            f"{name} is {lic} ({_WHY.get(lic, 'allows ' + ', '.join(sorted(RELEASES[lic])))})"
            for name, lic in sorted(sources.items())
            if lic != "CC0-1.0"
        )
    )


def _refusing(sources: dict[str, str], release: str) -> str:
    bad = sorted((n, lic) for n, lic in sources.items() if release not in RELEASES[lic])
    return "; ".join(f"corpus {n} is {lic} ({_WHY.get(lic, 'attribution required')})"
                     for n, lic in bad)  # fmt: skip


def _governing(sources: dict[str, str], release: str) -> tuple[str, ...]:
    """The sources that rule out every more permissive release than ``release``."""
    better = ("CC0-1.0",) if release in PERMISSIVE else PREFERENCE[: PREFERENCE.index(release)]
    return tuple(
        f"{n} ({lic})"
        for n, lic in sorted(sources.items())
        if any(b not in RELEASES[lic] for b in better)
    )


def attribution_lines(corpora: Iterable[dict]) -> list[str]:
    """One attribution line per source: the recipe's ``attribution`` (title, authors,
    where it came from) and the source's licence; the changes benchforge made are the
    card's *Collection and cleaning* and *Item construction* sections."""
    from pipelines.core.markdown import escape

    lines = []
    for c in corpora:
        # the recipe's words are text, not markup (issue 32)
        credit = (escape(c["attribution"]) if c.get("attribution")
                  else f"corpus `{c['name']}` (no attribution in the recipe)")  # fmt: skip
        lines.append(f"{credit}. Licence: {c['license']}. Adapted: sentences selected, "
                     "cleaned, paired and annotated by benchforge (see this card).")  # fmt: skip
    return lines


def licence_url(licence: str) -> str | None:
    """The SPDX page of ``licence`` (its full text and identifier), or None for an id
    SPDX does not list (``LicenseRef-...``: the card's attribution says what it is)."""
    if licence.startswith("LicenseRef-") or not known(licence):
        return None
    return f"https://spdx.org/licenses/{licence}.html"


def licence_link(licence: str) -> str:
    """``licence`` as a Markdown link to its SPDX page, or a code span where SPDX has no
    page for it."""
    url = licence_url(licence)
    return f"[{licence}]({url})" if url else f"`{licence}`"
