"""The exceptions simrun raises, with the command line's messages.

InputError   bad input (a ValueError): an argument, a matrix, an input file's key or value.
             For an input file's error, `file`, `line`, `column` and `key` say where
             (None where not known).
UsageError   a back-end that this build lacks or that finds no device (a ValueError).
SolveFailure a run whose linear solve failed (a RuntimeError); simrun.solve never raises it,
             it reports the outcome in info["status"].
"""

import re

_PLACE = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<column>\d+)$")


class InputError(ValueError):
    def __init__(self, message, place="", key=""):
        super().__init__(message)
        self.place = place or None
        self.key = key or None
        self.file = self.line = self.column = None
        match = _PLACE.match(place or "")
        if match:
            self.file = match["file"]
            self.line = int(match["line"])
            self.column = int(match["column"])
        elif place and not place.startswith(("--set ", "set=")):
            self.file = place


class UsageError(ValueError):
    pass


class SolveFailure(RuntimeError):
    pass
