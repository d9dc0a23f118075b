"""Regular expressions on RE2: matching takes linear time, so no pattern can backtrack catastrophically.

    pattern = compile_pattern(r"^\\d{4}-\\d{2}$")     # ValueError with RE2's message if invalid
    pattern.search("2024-05") is not None

RE2 has no backreferences or lookaround; a pattern that needs them is refused when the hook's
params are checked, never at run time.
"""

from __future__ import annotations

import functools
from typing import Any

import re2  # type: ignore[import-untyped]

MAX_PATTERN_LENGTH = 1000


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str, ignore_case: bool = False) -> Any:
    """The compiled RE2 pattern; raises ``ValueError`` saying why it cannot be used."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(f"the pattern is {len(pattern)} characters long; the limit is {MAX_PATTERN_LENGTH}")
    options = re2.Options()
    options.log_errors = False  # the error is returned to whoever wrote the pattern, not logged
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(
            f"not a valid RE2 pattern ({detail}); backreferences and lookaround are not supported"
        ) from None


def pattern_error(pattern: str, ignore_case: bool = False) -> str | None:
    """Why ``pattern`` cannot be used, or None if it can."""
    try:
        compile_pattern(pattern, ignore_case)
    except ValueError as exc:
        return str(exc)
    return None
