"""Running hooks where a hang cannot hold the caller: a forked child process with a deadline.

A web request (simulate, replay) runs in a thread, where no alarm can interrupt a hook, and a
hook stuck in C code ignores alarms anyway. ``call_with_deadline`` runs the work in a child
process forked from the caller, so the child has the caller's pipelines and data at hand (and
per-hook timeouts work again: the child's only thread is its main thread); after the deadline the
child is killed, and nothing of it is left behind::

    result = call_with_deadline(lambda progress: pipeline.run(item, on_step=progress), seconds=5)

The child shares the caller's open database connection (the caller waits meanwhile, so the two
never use it at once) and leaves with ``os._exit``, so it closes nothing of the caller's. A child
killed in the middle of a query leaves that connection unusable: the caller's connections are
then closed (outside a transaction), and Django opens new ones when next needed.
"""
from __future__ import annotations

import logging
import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from django.db import connections

from ..exceptions import StashError

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Unanswered(StashError):
    """The hooks gave no answer: they ran out of time, or their process failed."""


class DeadlineExceeded(Unanswered):
    """The hooks did not finish in time; the message names the deadline and what was running."""

    def __init__(self, seconds: float, running: str | None = None):
        doing = f": {running} was still running" if running else ""
        super().__init__(f"The hooks did not finish within {seconds:g} s{doing}. It was stopped; nothing was "
                         f"saved. A hook that needs longer runs on the workers, where its timeout_ms stops it.")
        self.seconds = seconds
        self.running = running


class ChildFailed(Unanswered):
    """The child process died or raised before it could answer."""


def call_with_deadline(work: Callable[[Callable[[str], None]], T], seconds: float) -> T:
    """Return ``work(progress)`` computed in a forked child, or raise ``DeadlineExceeded`` after
    ``seconds`` (the child is killed first) or ``ChildFailed``. ``progress(text)`` tells the
    caller what the child is doing ("hook 'No spam'"), so that a timeout can name it."""
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


def _run_child(work: Callable[[Callable[[str], None]], Any], writer: Connection) -> None:
    try:
        value = work(lambda text: writer.send(("progress", text)))
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
