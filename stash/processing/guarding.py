"""The golden examples' guard on a change of stashes' pipelines, with no lock held while they run.

    response, checked = run_checked(lambda: serializer.save())   # ExamplesBroken, PipelineChanged
    checked.failing, checked.unanswered                          # what to warn of once it is kept

A change (a save, an action, a delete, a reorder: any callable that makes ``one_change``s) is made
first as a draft: at its end, under the stashes' row locks, what it leaves each stash it moved
(settings, hooks, examples, and the version it started from) is read and the change is rolled
back. The examples then run, with no transaction open, against the live version and the draft
(``compare_examples``); a stash that blocks refuses a change only for the examples it breaks
(``refuse_if_broken``). The change is then made again, and kept only if, under the locks, it
leaves exactly what was checked; if another change came in between, it is checked again (at most
``ATTEMPTS`` times in all, then ``PipelineChanged``). A change that moves no stash with examples
is kept the first time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from django.utils.translation import gettext as _

from stash.core import documents
from stash.core.exceptions import StashError
from stash.db.versioning import checking
from stash.models import Example, ExamplesPolicy, HookConfig, PipelineVersion, Stash
from stash.processing.child_process import Unanswered
from stash.processing.examples import ExampleResult, compare_examples, refuse_if_broken

T = TypeVar("T")

#: How many times a change is drafted and checked before another change's coming in between
#: every time makes it give up.
ATTEMPTS = 3


class PipelineChanged(StashError):
    """The stash's pipeline (or its examples) changed while the change's examples ran, each time it
    was tried: nothing was changed."""

    def __init__(self, slugs: list[str]) -> None:
        super().__init__(
            _(
                "Nothing was changed: the pipeline of %(stashes)s changed meanwhile, while its golden "
                "examples ran. Reload it and make the change again."
            )
            % {"stashes": ", ".join(slugs)}
        )


@dataclass
class CheckedChange:
    """What the examples said of a change that was kept: those that did not pass (already failing,
    not run in time, or broken in a stash that only warns), and why examples that could not run
    did not (one line per such stash)."""

    failing: list[ExampleResult] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Draft:
    """What a change leaves a stash, as read at its end: what its examples are checked against."""

    stash: Stash
    hooks: list[HookConfig]
    examples: list[Example]
    live: int | None  # the version it started from (None: a stash it creates)
    key: str  # all of the above, as text: the same key, the same check


class _Drafted(Exception):  # not an error: it rolls a draft back
    def __init__(self, drafts: dict[int, Draft]) -> None:
        self.drafts = drafts


def run_checked(change: Callable[[], T], again: Callable[[], None] | None = None) -> tuple[T, CheckedChange]:
    """``change()``, kept only if the golden examples of the stashes it moves allow it (see the
    module's docstring); its answer and what to warn of. ``again()`` is called before ``change``
    runs again after a draft (e.g. to drop the messages the draft queued). Raises
    ``ExamplesBroken`` (or ``Unanswered``: its examples could not run) for a stash that blocks,
    and ``PipelineChanged``; nothing of the change is kept then. Starts outside any change."""
    drafts: dict[int, Draft] = {}
    checked = CheckedChange()
    for _attempt in range(ATTEMPTS):
        try:
            with checking(partial(_same_as_checked, drafts)):
                return change(), checked
        except _Drafted as drafted:
            drafts = drafted.drafts
        checked = CheckedChange()
        for draft in drafts.values():
            _check(draft, checked)
        if again is not None:
            again()
    raise PipelineChanged(sorted(draft.stash.slug for draft in drafts.values()))


def _same_as_checked(drafts: dict[int, Draft], stash_ids: list[int]) -> None:
    """At the end of a change, under its locks: go on if it leaves each stash what was checked (or,
    the first time, no stash it moved has examples); else roll it back as a draft."""
    now = {pk: draft for pk in stash_ids if (draft := draft_of(pk)) is not None}
    if not drafts and not any(draft.examples and not _judges_alike(draft) for draft in now.values()):
        return
    if all(pk in drafts and drafts[pk].key == draft.key for pk, draft in now.items()):
        return
    raise _Drafted(now)


def draft_of(stash_id: int) -> Draft | None:
    """What the current change leaves stash ``stash_id`` (None if it deleted it)."""
    stash = Stash.objects.filter(pk=stash_id).first()
    if stash is None:
        return None
    hooks = list(HookConfig.objects.filter(stash_id=stash_id).in_order())
    examples = list(Example.objects.filter(stash_id=stash_id).order_by("name"))
    # A change moves the version of each stash it changes by one; a stash it creates has none yet.
    live = stash.config_version - 1 if PipelineVersion.objects.filter(stash_id=stash_id).exists() else None
    # Without ids: a hook the change adds gets another id each time on PostgreSQL (sequences do not
    # roll back); another change in between moves the live version.
    key = documents.dumps(
        {
            "pipeline": documents.pipeline_document(stash, hooks),
            "live": live,
            "examples": documents.example_entries(examples),
        }
    )
    return Draft(stash=stash, hooks=hooks, examples=examples, live=live, key=key)


def _judges_alike(draft: Draft) -> bool:
    """Whether the draft judges as its live version does (same hooks, same default error policy:
    a change of the stash's name, say): its examples need not run."""
    if draft.live is None:
        return False
    live = PipelineVersion.objects.filter(stash_id=draft.stash.pk, number=draft.live).values_list("document", flat=True)
    document = next(iter(live), None)
    new = documents.pipeline_document(draft.stash, draft.hooks, ids=True)
    return (
        document is not None
        and document["stash"].get("on_error") == draft.stash.on_error
        and (documents.dumps({"hooks": document["hooks"]}) == documents.dumps({"hooks": new["hooks"]}))
    )


def _check(draft: Draft, checked: CheckedChange) -> None:
    try:
        results = compare_examples(draft.stash, draft.hooks, draft.examples, draft.live)
    except Unanswered as exc:
        if draft.stash.examples_policy == ExamplesPolicy.BLOCK:
            raise
        checked.unanswered.append(f"{draft.stash.slug}: {exc}")
        return
    refuse_if_broken(draft.stash, results)
    checked.failing += [result for result in results if not result.passed]
