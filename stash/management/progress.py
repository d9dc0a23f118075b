"""The progress of a long command: a bar with counts and rate on a terminal, plain lines when piped.

It writes to the command's standard error, so that what a command prints on standard output (the
items ``stash_export`` writes, say) stays as it was. At ``-v 0`` it writes nothing.

    with Progress(self.stderr, f"export {slug}", total=count, verbosity=options["verbosity"]) as progress:
        for row in progress.wrap(rows):
            ...
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress as Bar,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

T = TypeVar("T")

#: Seconds between two plain lines when the output is not a terminal.
EVERY = 5.0


class Progress:
    """Counts ``advance``d (or ``update``d to a total so far) of ``label``'s work, of ``total`` if
    known. On a terminal: a bar (counts, rate, time left); else a plain line every ``every``
    seconds and one at the end, e.g. ``export audit: 12,000 of 50,000 items (24%), 3,100/s``.
    ``verbosity`` 0: silent; 2 or more: a plain line at every step."""

    def __init__(
        self,
        stream: Any,
        label: str,
        total: int | None = None,
        verbosity: int = 1,
        unit: str = "items",
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.unit, self.clock = label, total, unit, clock
        self.every = 0.0 if verbosity >= 2 else every
        self.count = 0
        self.stream = stream
        self.silent = verbosity < 1
        self.bar: Bar | None = None
        if not self.silent and _is_terminal(stream):
            self.bar = _bar(getattr(stream, "_out", stream), label, unit, total)
        self.started = self.last = clock()

    def __enter__(self) -> Progress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def wrap(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, one by one, each counted once it is handed on."""
        for item in items:
            yield item
            self.advance()

    def advance(self, count: int = 1) -> None:
        self.update(self.count + count)

    def update(self, count: int) -> None:
        """The work done so far is ``count``."""
        self.count = count
        if self.bar is not None:
            self.bar.update(self.bar.task_ids[0], completed=count)
        elif not self.silent and self.clock() - self.last >= self.every:
            self.last = self.clock()
            self._line()

    def close(self) -> None:
        """Ends the bar, or writes the last plain line (how many, in how long)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        elif not self.silent:
            self.silent = True  # closed once
            seconds = self.clock() - self.started
            self._write(f"{self.label}: {self.count:,} {self.unit} in {seconds:.1f} s{_rate(self.count, seconds)}")

    def _line(self) -> None:
        done = f"{self.count:,}"
        if self.total:
            done += f" of {self.total:,} {self.unit} ({100 * self.count // self.total}%)"
        else:
            done += f" {self.unit}"
        self._write(f"{self.label}: {done}{_rate(self.count, self.clock() - self.started)}")

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")  # a Django OutputWrapper adds none to a line that has one
        if hasattr(self.stream, "flush"):
            self.stream.flush()


@contextmanager
def working(stream: Any, doing: str, verbosity: int = 1, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Says what a step that cannot count its work is ``doing``, while it runs: a spinner with the
    time so far on a terminal; else a line as it starts and one as it ends. ``verbosity`` 0: silent."""
    if verbosity < 1:
        yield
    elif _is_terminal(stream):
        with Console(file=getattr(stream, "_out", stream)).status(f"{doing}…"):
            yield
    else:
        started = clock()
        stream.write(f"{doing}…\n")
        yield
        stream.write(f"{doing}: done in {clock() - started:.1f} s\n")


def _rate(count: int, seconds: float) -> str:
    return f", {count / seconds:,.0f}/s" if seconds > 0 and count else ""


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class _Rate(ProgressColumn):
    """Items a second, as counted so far."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")


def _bar(out: Any, label: str, unit: str, total: int | None) -> Bar:
    columns: list[ProgressColumn] = [TextColumn("{task.description}")]
    if total:
        columns += [BarColumn(), MofNCompleteColumn(), TextColumn(unit), _Rate(), TimeRemainingColumn()]
    else:
        columns += [TextColumn("{task.completed:,.0f} " + unit), _Rate(), TimeElapsedColumn()]
    bar = Bar(*columns, console=Console(file=out))
    bar.add_task(label, total=total or None)
    return bar
