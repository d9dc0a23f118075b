"""One change, one bump, one version: the stashes whose ``config_version`` the current change has
moved already, and the record of each change as a pipeline version.

    with versioning.one_change():      # an admin save, an action, a reorder: one change
        stash.save()                   # moves audit's config_version ...
        config.save()                  # ... and this, of the same stash, does not again

Outside ``one_change`` every write that changes a pipeline moves its stash's version once, as
before. Inside, the first such write of each stash moves it (at once, so what the block reads
afterwards is current, and the stash's row stays locked until the commit) and the others of that
stash leave it: workers rebuild a pipeline once per change, however many rows it touched.

A part of the block that is rolled back (a savepoint) takes its bump with it; a later write of
that stash in the block then moves the version again. Each bump is remembered by a marker
registered with ``transaction.on_commit``, which such a rollback drops (``compat.on_commit_pending``).

At the end of the outermost block, in its transaction, the check of a ``checking`` context is
given the stashes the change moved (it refuses the change by raising); then the ``recorder``
(``models`` sets it: it writes a ``PipelineVersion``) is given the stashes that were moved or
created, the change's ``note`` and its ``author`` (see ``authored_by``): every version of a
pipeline is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.db import transaction

from stash.db.compat import on_commit_pending


class Recorder(Protocol):
    def __call__(self, stash_ids: list[int], *, note: str, author: Any, using: str) -> None: ...


@dataclass
class _Change:
    #: stash id -> the marker of its bump (or creation) in this change.
    moved: dict[int, Callable[[], None]] = field(default_factory=dict)
    note: str = ""


_change: ContextVar[_Change | None] = ContextVar("stash_change", default=None)
# Who makes the changes of this context: a callable, read when a version is written (a request's
# user is known only once the view has authenticated it).
_author: ContextVar[Callable[[], Any] | None] = ContextVar("stash_change_author", default=None)

# What each change of this context must pass before it is kept (see ``checking``).
_check: ContextVar[Callable[[list[int]], None] | None] = ContextVar("stash_change_check", default=None)

#: Writes the versions of a change's stashes; ``models`` sets it.
recorder: Recorder | None = None


@contextmanager
def one_change(using: str = "default", note: str = "") -> Iterator[None]:
    """Make the block one transaction in which each stash's ``config_version`` moves at most once,
    and which ends by recording a version of each stash it changed. Nested blocks are savepoints
    of the outer change; ``note`` (e.g. "restore of version 3") heads the version's summary."""
    current = _change.get()
    if current is not None:
        if note:
            current.note = note
        with transaction.atomic(using=using):
            yield
        return
    change = _Change(note=note)
    token = _change.set(change)
    try:
        with transaction.atomic(using=using):
            yield
            moved = sorted(pk for pk, marker in change.moved.items() if on_commit_pending(marker, using))
            check = _check.get()
            if moved and check is not None:
                check(moved)
            if moved and recorder is not None:
                recorder(moved, note=change.note, author=current_author(), using=using)
    finally:
        _change.reset(token)


def to_bump(stash_ids: Iterable[int], using: str = "default") -> list[int]:
    """Of ``stash_ids``, in order, those whose version the caller should move now: all of them
    outside a change; inside one, those it has not moved yet (which now count as moved)."""
    ids = sorted(set(stash_ids))
    change = _change.get()
    if change is None:
        return ids
    fresh = [pk for pk in ids if pk not in change.moved or not on_commit_pending(change.moved[pk], using)]
    _mark(change, fresh, using)
    return fresh


def created(stash_id: int, using: str = "default") -> None:
    """Note a stash created in the current change: its first version is recorded with it."""
    change = _change.get()
    if change is not None:
        _mark(change, [stash_id], using)


def _mark(change: _Change, stash_ids: list[int], using: str) -> None:
    for pk in stash_ids:
        # A callback of its own (``on_commit_pending`` tells callbacks apart by identity) that does nothing.
        change.moved[pk] = marker = _marker()
        transaction.on_commit(marker, using=using)


def _marker() -> Callable[[], None]:
    return lambda: None


@contextmanager
def checking(check: Callable[[list[int]], None]) -> Iterator[None]:
    """Each change made in the block ends, in its transaction and before its versions are written,
    by calling ``check`` with the ids of the stashes it changed: an exception it raises undoes the
    change. Not inside a change (whose end would come after the block)."""
    if _change.get() is not None:
        raise RuntimeError("checking() must start outside any change")
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


@contextmanager
def authored_by(author: Callable[[], Any]) -> Iterator[None]:
    """Changes made in the block are ``author()``'s (a user, or None): called when a version is written."""
    token = _author.set(author)
    try:
        yield
    finally:
        _author.reset(token)


def current_author() -> Any:
    """The user making the current changes, or None (a command, a worker, code)."""
    author = _author.get()
    user = author() if author is not None else None
    return user if getattr(user, "is_authenticated", False) else None
