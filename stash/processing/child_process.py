"""Running hooks where a hang cannot hold the caller: a forked child process with a deadline.

A web request (simulate, replay) runs in a thread, where no alarm can interrupt a hook, and a
hook stuck in C code ignores alarms anyway. ``call_with_deadline`` runs the work in a child
process forked from the caller, so the child has the caller's pipelines and data at hand (and
per-hook timeouts work again: the child's only thread is its main thread); after the deadline the
child is killed, and nothing of it is left behind::

    result = call_with_deadline(lambda progress: pipeline.run(item, on_step=progress), seconds=5)
    answers, late = gather_with_deadline([one, two, three], seconds=5)   # those done in time, in order

The child shares the caller's open database connection (the caller waits meanwhile, so the two
never use it at once) and leaves with ``os._exit``, so it closes nothing of the caller's. A child
killed in the middle of a query leaves that connection unusable: the caller's connections are
then closed (outside a transaction), and Django opens new ones when next needed.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from django.db import connections

from stash.core.exceptions import StashError

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Unanswered(StashError):
    """The hooks gave no answer: they ran out of time, or their process failed."""


class DeadlineExceeded(Unanswered):
    """The hooks did not finish in time; the message names the deadline and what was running."""

    def __init__(self, seconds: float, running: str | None = None):
        doing = f": {running} was still running" if running else ""
        super().__init__(
            f"The hooks did not finish within {seconds:g} s{doing}. It was stopped; nothing was "
            f"saved. A hook that needs longer runs on the workers, where its timeout_ms stops it."
        )
        self.seconds = seconds
        self.running = running


class ChildFailed(Unanswered):
    """The child process died or raised before it could answer."""


def call_with_deadline(work: Callable[[Callable[[str], None]], T], seconds: float) -> T:
    """Return ``work(progress)`` computed in a forked child, or raise ``DeadlineExceeded`` after
    ``seconds`` (the child is killed first) or ``ChildFailed``. ``progress(text)`` tells the
    caller what the child is doing ("hook 'No spam'"), so that a timeout can name it."""
    return _supervise(work, seconds, [])


def gather_with_deadline(
    steps: Sequence[Callable[[Callable[[str], None]], T]],
    seconds: float,
    on_answer: Callable[[int], object] | None = None,
) -> tuple[list[T], DeadlineExceeded | None]:
    """Run ``steps`` one after another in one forked child (each as ``call_with_deadline`` runs its
    work), all of them within ``seconds``. Returns the answers of the steps that finished in time,
    in order, and the ``DeadlineExceeded`` that stopped the others (None when all finished): a slow
    step costs the ones after it, not those before. Raises ``ChildFailed`` as ``call_with_deadline``.
    ``on_answer(count)`` is called in the caller as each answer comes, with how many have come."""
    answers: list[T] = []

    def work(progress: Callable[[str], None]) -> None:
        for step in steps:
            progress.send(("part", step(progress)))  # type: ignore[attr-defined]

    try:
        _supervise(work, seconds, answers, on_answer)
    except DeadlineExceeded as late:
        return answers, late
    return answers, None


def _supervise(
    work: Callable[[Callable[[str], None]], T],
    seconds: float,
    parts: list[Any],
    on_part: Callable[[int], object] | None = None,
) -> T:
    """``call_with_deadline``; the answers the child sends as it goes are appended to ``parts``
    (and counted to ``on_part``)."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=_run_child, args=(work, writer), daemon=True, name="stash-deadline")
    child.start()
    writer.close()
    deadline = time.monotonic() + seconds
    running, finished = None, False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not reader.poll(left):
                raise DeadlineExceeded(seconds, running)
            try:
                kind, value = reader.recv()
            except EOFError:
                raise ChildFailed("The process running the hooks stopped before it answered.") from None
            if kind == "progress":
                running = value
            elif kind == "part":
                parts.append(value)
                if on_part is not None:
                    on_part(len(parts))
            elif kind == "result":
                finished = True
                return value
            else:
                raise ChildFailed(value)
    finally:
        reader.close()
        if child.is_alive():
            child.kill()
        child.join()
        if not finished:
            _drop_connections()


class _Progress:
    """What the child's work calls to say what it is doing; ``send`` hands the caller a message."""

    def __init__(self, writer: Connection) -> None:
        self.send = writer.send

    def __call__(self, text: str) -> None:
        self.send(("progress", text))


def _run_child(work: Callable[[Callable[[str], None]], Any], writer: Connection) -> None:
    try:
        value = work(_Progress(writer))
    except Exception as exc:  # reported to the caller, which raises ChildFailed
        writer.send(("error", f"{type(exc).__name__}: {exc}"))
    else:
        writer.send(("result", value))
    finally:
        writer.close()


def _drop_connections() -> None:
    """The child may have died in a query on a connection it shared: don't use them again."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()
