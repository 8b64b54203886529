"""The line ends of a KLUE release file (the NER and DP TSV layouts): one kind
throughout, kept on writing back so a file round-trips byte for byte."""

from __future__ import annotations


def line_ends(text: str, where: str, error: type[Exception] = ValueError) -> str:
    """``"\\r\\n"`` when every line of ``text`` ends so, ``"\\n"`` when none does; a
    mix is ``error`` naming ``where`` and the first line that ends with LF only."""
    crlf = text.count("\r\n")
    if not crlf:
        return "\n"
    if crlf == text.count("\n"):
        return "\r\n"
    line = next(n for n, part in enumerate(text.split("\n")[:-1], start=1)
                if not part.endswith("\r"))  # fmt: skip
    raise error(f"{where}:{line}: the file mixes CRLF and LF line ends (this line "
                "ends with LF only); use one kind throughout")  # fmt: skip
