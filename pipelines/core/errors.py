"""The one base of benchforge's errors.

Every error a user can cause or mend (bad input, a setting out of range, a server that
does not answer, a folder another run holds) is a :class:`BenchforgeError`: its message
names the file and the line, row or key and the problem, and the command line prints it
as one ``benchforge: error:`` line and exits with its ``exit_code`` (2), without a
traceback. The command line catches this one class (issue 33), so a new module's error
needs no edit of the CLI: it subclasses ``BenchforgeError`` (and, where callers already
catch it so, ``ValueError`` or ``RuntimeError``).
"""

from __future__ import annotations


class BenchforgeError(Exception):
    """An error the command line reports as one line, exiting with ``exit_code``."""

    exit_code: int = 2
