"""Golden examples: payloads with the verdict a stash's pipeline must give them.

    results = run_examples(stash)                          # its examples, its current hooks
    results = run_examples(stash, hooks=drafted_hooks(...))  # against hooks as edited, not saved
    broken = [result for result in results if not result.passed]
    broken = check_change(stash, hooks)                    # ExamplesBroken if the stash blocks such a change
    with checked_change() as checked:                      # each change in it kept only if the examples allow
        set_enabled(configs, False)
    checked.broken, checked.unanswered                     # what to warn of, from stashes that only warn

Like simulate, the hooks run in a forked child with a deadline (``isolation``); nothing is saved
or counted and no sink is called. ``example_from(content)`` turns an item into an example that
expects the verdict the item has.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from .. import pipeline
from ..exceptions import StashError
from ..models import Content, Example, ExamplesPolicy, HookConfig, PipelineRun, Stash
from ..versioning import checking
from . import limits
from .isolation import Unanswered, call_with_deadline
from .judging import build_step, pipeline_for


@dataclass(frozen=True)
class ExampleResult:
    """What the pipeline did with one example, and how that differs from what it expects."""

    name: str
    expected: str
    verdict: str
    reason: str = ""
    code: str = ""
    hook: str = ""
    expected_code: str = ""
    expected_hook: str = ""

    @property
    def problems(self) -> list[str]:
        said = []
        if self.verdict != self.expected:
            said.append(_("expected %(expected)s, got %(verdict)s") % {"expected": self.expected,
                                                                       "verdict": self.verdict})
        if self.expected_code and self.code != self.expected_code:
            said.append(_("expected reason code %(expected)r, got %(code)r") % {"expected": self.expected_code,
                                                                                "code": self.code})
        if self.expected_hook and self.hook != self.expected_hook:
            said.append(_("expected %(expected)r to decide, got %(hook)r") % {"expected": self.expected_hook,
                                                                              "hook": self.hook or _("no hook")})
        return said

    @property
    def passed(self) -> bool:
        return not self.problems

    def describe(self) -> str:
        """One line: the example and what went wrong (or "passed")."""
        return f"{self.name}: {'; '.join(self.problems) if self.problems else _('passed')}"

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "problems": self.problems, "expected": self.expected,
                "verdict": self.verdict, "reason": self.reason, "code": self.code, "hook": self.hook,
                "expected_code": self.expected_code, "expected_hook": self.expected_hook}


class ExamplesBroken(StashError):
    """A change would break golden examples of a stash that blocks such changes; nothing was changed."""

    def __init__(self, stash: Stash, results: Sequence[ExampleResult]) -> None:
        self.stash = stash
        self.results = list(results)
        self.broken = [result for result in results if not result.passed]
        super().__init__(_("This change breaks %(count)d golden example(s) of %(stash)s, which refuses such "
                           "changes: %(which)s") % {"count": len(self.broken), "stash": stash.slug,
                                                    "which": " | ".join(r.describe() for r in self.broken)})


def run_examples(stash: Stash, *, hooks: Iterable[HookConfig] | None = None,
                 examples: Iterable[Example] | None = None) -> list[ExampleResult]:
    """Run ``examples`` (default: the stash's) through ``stash``'s current hooks, or through
    ``hooks`` (configs in run order, saved or not: the enabled ones run), in one child process
    given ``STASH_EXAMPLES_TIMEOUT`` seconds. Raises ``DeadlineExceeded`` past it."""
    examples = list(stash.examples.all() if examples is None else examples)
    if not examples:
        return []
    checked = pipeline_for(stash) if hooks is None else pipeline.Pipeline(
        [build_step(config, stash) for config in hooks if config.enabled])
    items = [pipeline.Item(payload=example.payload, stash=stash.slug, source="example") for example in examples]

    def run(progress: Callable[[str], None]) -> list[pipeline.Result]:
        # Each example alone, on scratch state (``looking``): nothing is counted, none counts for another.
        return [checked.looking().run(item, on_step=lambda step: progress(f"hook {step.title!r}")) for item in items]

    results = call_with_deadline(run, settings.STASH_EXAMPLES_TIMEOUT)
    return [_compare(example, result) for example, result in zip(examples, results, strict=True)]


def check_change(stash: Stash, hooks: Iterable[HookConfig]) -> list[ExampleResult]:
    """Before ``stash``'s hooks become ``hooks`` (configs in run order, saved or not): run its
    examples against them. Returns the broken ones when its ``examples_policy`` (as ``stash``
    holds it) lets such a change through; raises ``ExamplesBroken`` when it blocks it, and
    ``Unanswered`` when the examples ran out of time. A stash not saved yet has no examples."""
    if stash.pk is None:
        return []
    results = run_examples(stash, hooks=hooks)
    broken = [result for result in results if not result.passed]
    if broken and stash.examples_policy == ExamplesPolicy.BLOCK:
        raise ExamplesBroken(stash, results)
    return broken


@dataclass
class CheckedChange:
    """What the examples said of a change that was kept: the broken ones of stashes that only warn,
    and why examples that could not run in time did not (one line per such stash)."""

    broken: list[ExampleResult] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)


@contextmanager
def checked_change() -> Iterator[CheckedChange]:
    """A block each of whose changes (``one_change``: an admin save, an action, a reorder) runs, in
    its transaction before it is kept, the golden examples of the stashes it changed against the
    hooks it leaves them (``check_change``).

    A stash that blocks a change breaking its examples (or whose examples cannot run in time)
    makes the change raise ``ExamplesBroken`` (or ``Unanswered``), and nothing of it is kept;
    otherwise the yielded ``CheckedChange`` gathers what to warn of. Starts outside any change.
    """
    checked = CheckedChange()

    def check(stash_ids: list[int]) -> None:
        for stash in Stash.objects.filter(pk__in=stash_ids).order_by("pk"):
            try:
                checked.broken += check_change(stash, stash.hooks.in_order())
            except Unanswered as exc:
                if stash.examples_policy == ExamplesPolicy.BLOCK:
                    raise
                checked.unanswered.append(f"{stash.slug}: {exc}")

    with checking(check):
        yield checked


def _compare(example: Example, result: pipeline.Result) -> ExampleResult:
    decider = next((entry for entry in result.trail if entry.stopped), None)
    return ExampleResult(name=example.name, expected=example.verdict, verdict=result.verdict, reason=result.reason,
                         code=result.code, hook=decider.title if decider is not None else "",
                         expected_code=example.reason_code, expected_hook=example.hook)


def decider_title(content: Content) -> str:
    """The label (or hook name) of the hook that decided ``content``'s latest run, or blank."""
    entry = _decider(content.runs.order_by("-finished_at", "-pk").first())
    return (entry.get("label") or entry.get("hook") or "") if entry else ""


def _decider(run: PipelineRun | None) -> dict[str, Any] | None:
    """The stored trail entry of the hook that decided ``run``, or None (an accepted run has none).
    A stored run is not verbose: it ends at that hook, and its entries carry no ``stopped`` mark."""
    if run is None or not run.trail or run.outcome == pipeline.ACCEPTED:
        return None
    return next((entry for entry in run.trail if entry.get("stopped")), run.trail[-1])


def example_from(content: Content, user: Any = None, verdict: str | None = None) -> Example:
    """A new golden example of ``content``'s stash: its payload as submitted, expecting ``verdict``
    (default: the item's, with the reason code and the hook of its latest run). Named after the item;
    ``ValueError`` if the item has no verdict yet, or its stash has all the examples it may have."""
    verdict = verdict or content.status
    try:
        limits.check_new_examples(content.stash_id)
    except ValidationError as exc:
        raise ValueError(" ".join(exc.messages)) from exc
    if verdict not in Example.Verdict.values:
        raise ValueError(_("Item %(id)s has no verdict yet (it is %(status)s).") % {"id": content.pk,
                                                                                     "status": content.status})
    run = content.runs.order_by("-finished_at", "-pk").first()
    same = run is not None and run.outcome == verdict  # not when a reviewer decided otherwise
    decider = _decider(run) if same else None
    code = decider.get("code", "") if decider else ""
    base = _("item %(id)s") % {"id": str(content.pk)[:8]}
    payload = content.original_payload if content.original_payload is not None else content.payload
    for attempt in range(1, 100):
        name = base if attempt == 1 else f"{base} ({attempt})"
        try:
            with transaction.atomic():
                return Example.objects.create(stash_id=content.stash_id, name=name, payload=payload, verdict=verdict,
                                              reason_code=code, hook=decider_title(content) if same else "",
                                              content=content, created_by=user)
        except IntegrityError:
            continue
    raise ValueError(_("Too many examples are named after item %(id)s.") % {"id": content.pk})
