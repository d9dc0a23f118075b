"""Log lines as JSON or text, with what the pipeline was doing bound to each.

Every process (web, worker, beat, commands) logs through the standard library; ``LOGGING`` in
the settings gives its one handler ``formatter(LOG_FORMAT)``, which renders each record with
the values bound here: while an item is judged, ``item``, ``stash`` and ``revision``; while a
hook runs, ``hook`` (its registry name) and ``hook_config`` (its HookConfig id); in a worker,
``task`` and ``task_id``. With ``LOG_FORMAT=json`` a line is one JSON object::

    {"event": "Hook Keywords failed in on_accept for 42: boom", "item": "42", "stash": "news",
     "revision": 2, "hook": "keywords", "hook_config": 7, "level": "error",
     "logger": "stash.processing.judging", "timestamp": "2026-12-03T14:02:11.503Z"}

With ``LOG_FORMAT=text`` a line is one line, whatever it says: control characters (a newline in
a payload key, a regex excerpt or an exception's message; a terminal's escape codes) are written
as escapes (``\\n``, ``\\x1b``, ``\\u2028``), as JSON writes them, so no value can start a forged line;
a traceback follows its event on the same line.

Values are bound in context variables (``structlog.contextvars``): hooks' own loggers, and
Django's and Celery's, get them too.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any, Iterator, cast

import structlog
from structlog.contextvars import bind_contextvars, merge_contextvars, reset_contextvars
from structlog.typing import EventDict, Processor, WrappedLogger

if TYPE_CHECKING:
    from stash.core.pipeline import Item, Step

FORMATS = ("json", "text")


def formatter(output: str = "text") -> structlog.stdlib.ProcessorFormatter:
    """The ``logging.Formatter`` of ``LOGGING``: ``output`` is "json" or "text"."""
    if output not in FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(FORMATS)}, not {output!r}.")
    renderer: list[Processor]
    if output == "json":
        renderer = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        # The plain traceback whatever is installed: Rich's (a development tool's dependency)
        # would draw boxes and show local values, a payload's included.
        renderer = [
            structlog.dev.ConsoleRenderer(
                colors=False, pad_event_to=0, exception_formatter=structlog.dev.plain_traceback
            ),
            # After the renderer, a processor is given the rendered line, not the event dict.
            cast(Processor, _one_line),
        ]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            merge_contextvars,
            _drop_unset,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *renderer],
    )


# C0 and C1 controls (newline, carriage return, escape, NEL, ...) and the Unicode line and
# paragraph separators: whatever a terminal or a log reader could take for the end of a line.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """``text`` with each control character written as its Python escape (``\\n``, ``\\x1b``)."""
    return _CONTROLS.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def _one_line(logger: WrappedLogger, method_name: str, line: str) -> str:
    """The rendered text line, its keys, values and traceback included, as one line."""
    return escape_controls(line)


def _drop_unset(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """Leave out a hook's values bound as None (an item's line outside its hooks)."""
    for key in ("hook", "hook_config"):
        if event_dict.get(key, "") is None:
            del event_dict[key]
    return event_dict


@contextlib.contextmanager
def bound(**values: Any) -> Iterator[None]:
    """Bind ``values`` to the lines logged inside; what was bound before comes back after."""
    tokens = bind_contextvars(**values)
    try:
        yield
    finally:
        reset_contextvars(**tokens)


def judging(item: Item) -> contextlib.AbstractContextManager[None]:
    """Bind ``item`` (a ``pipeline.Item``) to the lines logged while it is judged or notified.
    Its hook's values are cleared on the way out too (see ``at_hook``)."""
    return bound(item=item.id, stash=item.stash, revision=item.revision, hook=None, hook_config=None)


def at_hook(step: Step) -> None:
    """Bind ``step``'s hook to the lines that follow, until the next ``at_hook`` or the end of the
    item's ``judging`` block (a ``pipeline.Pipeline.run`` ``on_step`` callback)."""
    bind_contextvars(hook=step.name, hook_config=step.config_id)


def in_hook(step: Step) -> contextlib.AbstractContextManager[None]:
    """Bind ``step``'s hook to the lines logged inside."""
    return bound(hook=step.name, hook_config=step.config_id)
