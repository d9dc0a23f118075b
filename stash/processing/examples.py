"""Golden examples: payloads with the verdict a stash's pipeline must give them.

    results = run_examples(stash)                          # its examples, its current hooks
    results = run_examples(stash, hooks=drafted_hooks(...))  # against hooks as edited, not saved
    results = compare_examples(stash, hooks, examples, live=3)  # each against version 3 and ``hooks``
    [result.status for result in results]                  # "passed", "breaks", "already failing", ...

Like simulate, the hooks run in a forked child with a deadline (``child_process``), one example after
another: those that do not finish within ``STASH_EXAMPLES_TIMEOUT`` are "not run in time", the
others are answered. Nothing is saved or counted and no sink is called. How a change is checked
against them is ``guarding``'s. ``example_from(content)`` turns an item into an example that
expects the verdict the item has.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from stash.core import documents, pipeline
from stash.core.exceptions import StashError
from stash.models import Content, Example, ExamplesPolicy, HookConfig, PipelineRun, Stash
from stash.processing import limits
from stash.processing.building import build_pipeline, build_step, pipeline_for
from stash.processing.callbacks import answer_decision
from stash.processing.child_process import gather_with_deadline

logger = logging.getLogger(__name__)

# A live version's answers to examples are kept this long (a version never changes; the hooks that
# read history may answer otherwise later, so not for ever).
ANSWERS_KEPT_SECONDS = 3600


#: How a trail says that an asynchronous hook's answer is the example's (its service was not asked).
GIVEN = "the service's answer, given by the example"

#: What an example's result says (``ExampleResult.status``).
PASSED, BREAKS, ALREADY_FAILING, LATE, FAILED = "passed", "breaks", "already failing", "not run in time", "failed"


@dataclass(frozen=True)
class ExampleResult:
    """What the pipeline did with one example, and how that differs from what it expects; in a
    change's check, also how the live version fared with it (``before``: passed, failed, not run
    in time)."""

    name: str
    expected: str
    verdict: str
    reason: str = ""
    code: str = ""
    hook: str = ""
    expected_code: str = ""
    expected_hook: str = ""
    ran: bool = True  # False: not run in time
    before: str = ""  # the live version's status of it, in a change's check ("" when there is none)
    #: The steps whose service's answer the example gave, as the trail has them ("Vendor: dropped").
    given: tuple[str, ...] = ()
    #: Titles the example gives a service's answer for that are no (enabled) asynchronous hook of the pipeline.
    unmatched: tuple[str, ...] = ()

    @property
    def problems(self) -> list[str]:
        if not self.ran:
            return [_("not run in time")]
        said = []
        if self.verdict != self.expected:
            said.append(
                _("expected %(expected)s, got %(verdict)s") % {"expected": self.expected, "verdict": self.verdict}
            )
        # A blank code or hook is said in words, not quoted: "got 'no hook'" reads as a hook named so.
        if self.expected_code and self.code != self.expected_code:
            said.append(
                _("expected reason code %(expected)r, got %(code)r")
                % {"expected": self.expected_code, "code": self.code}
                if self.code
                else _("expected reason code %(expected)r, got none") % {"expected": self.expected_code}
            )
        if self.expected_hook and self.hook != self.expected_hook:
            said.append(
                _("expected %(expected)r to decide, got %(hook)r") % {"expected": self.expected_hook, "hook": self.hook}
                if self.hook
                else _("expected %(expected)r to decide, but no hook decided") % {"expected": self.expected_hook}
            )
        if said:  # an answer for a hook since renamed, disabled or made synchronous is left unused: say so
            said.extend(
                _("its service answer for %(hook)r was not used: no enabled asynchronous hook has this label")
                % {"hook": title}
                for title in self.unmatched
            )
        return said

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def status(self) -> str:
        """``PASSED``; ``LATE`` (not run in time); in a change's check ``BREAKS`` (it passed on the
        live version) or ``ALREADY_FAILING`` (it failed there too); else ``FAILED`` (no live version
        to compare with, or its answer came too late)."""
        if self.passed:
            return PASSED
        if not self.ran:
            return LATE
        return {PASSED: BREAKS, FAILED: ALREADY_FAILING}.get(self.before, FAILED)

    @property
    def blocks(self) -> bool:
        """Whether a change may be refused for it: only for an example the change breaks."""
        return self.status == BREAKS

    @property
    def note(self) -> str:
        """What its status adds to its problems ("" when they say it all)."""
        if self.status == ALREADY_FAILING:
            return _("already failing before this change")
        if self.status == FAILED and self.before == LATE:
            return _("the live version did not answer it in time")
        return ""

    def describe(self) -> str:
        """One line: the example and what went wrong (or "passed"), and why that does not block a
        change when it does not: every face words a result with it."""
        said = "; ".join(self.problems) if self.problems else _("passed")
        return f"{self.name}: {said} ({self.note})" if self.note else f"{self.name}: {said}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "status": self.status,
            "problems": self.problems,
            "expected": self.expected,
            "verdict": self.verdict,
            "reason": self.reason,
            "code": self.code,
            "hook": self.hook,
            "expected_code": self.expected_code,
            "expected_hook": self.expected_hook,
            "given": list(self.given),
        }


class ExamplesBroken(StashError):
    """A change would break golden examples of a stash that blocks such changes (they passed on its
    live version and fail on the new one); nothing was changed. ``results``: all of the check's."""

    def __init__(self, stash: Stash, results: Sequence[ExampleResult]) -> None:
        self.stash = stash
        self.results = list(results)
        self.broken = [result for result in results if result.blocks]
        super().__init__(
            _("This change breaks %(count)d golden example(s) of %(stash)s, which refuses such changes: %(which)s")
            % {"count": len(self.broken), "stash": stash.slug, "which": " | ".join(r.describe() for r in self.broken)}
        )


def refuse_if_broken(stash: Stash, results: Sequence[ExampleResult]) -> None:
    """Raise ``ExamplesBroken`` if ``stash`` (as it holds its ``examples_policy``) blocks a change
    with these ``results``: one that breaks an example. Failing and slow ones never block."""
    if stash.examples_policy == ExamplesPolicy.BLOCK and any(result.blocks for result in results):
        raise ExamplesBroken(stash, results)


def run_examples(
    stash: Stash, *, hooks: Iterable[HookConfig] | None = None, examples: Iterable[Example] | None = None
) -> list[ExampleResult]:
    """Run ``examples`` (default: the stash's) through ``stash``'s current hooks, or through
    ``hooks`` (configs in run order, saved or not: the enabled ones run), in one child process
    given ``STASH_EXAMPLES_TIMEOUT`` seconds; those it did not reach in time are not ``ran``.
    Raises ``ChildFailed`` if the child fails."""
    examples = list(stash.examples.all() if examples is None else examples)
    if not examples:
        return []
    checked = pipeline_for(stash) if hooks is None else drafted_pipeline(stash, hooks)
    waits = _asynchronous(checked)
    return [
        _compare(example, answer[1] if answer else None, waits)
        for example, answer in zip(examples, _run(examples, stash, checked), strict=True)
    ]


def compare_examples(
    stash: Stash,
    hooks: Iterable[HookConfig],
    examples: Iterable[Example],
    live: int | None,
    on_example: Callable[[int], object] | None = None,
) -> list[ExampleResult]:
    """Run ``examples`` through ``hooks`` (``stash``'s pipeline as a change would leave it) and
    through its live version number ``live`` (None: a new stash, with none), one example after
    the other, in one child given ``STASH_EXAMPLES_TIMEOUT`` seconds: each result's ``before``
    says how the live version fared. The live version's answers are reused from the cache when
    it gave them before. ``on_example(count)`` is told how many have run, as they run. Raises
    ``ChildFailed`` if the child fails."""
    examples = list(examples)
    if not examples:
        return []
    old = None if live is None else build_pipeline(Stash(pk=stash.pk, slug=stash.slug, config_version=live))
    known = _known_answers(stash, live, examples)
    new = drafted_pipeline(stash, hooks)
    answers = _run(examples, stash, new, old, known, on_example)
    results, learnt = [], {}
    for index, (example, answer) in enumerate(zip(examples, answers, strict=True)):
        ran_before, after = answer if answer is not None else (None, None)
        if ran_before is not None:
            learnt[index] = ran_before
        before = known.get(index, ran_before)
        was = "" if old is None else _compare(example, before, _asynchronous(old)).status
        results.append(replace(_compare(example, after, _asynchronous(new)), before=was))
    _remember_answers(stash, live, examples, learnt)
    return results


def drafted_pipeline(stash: Stash, hooks: Iterable[HookConfig]) -> pipeline.Pipeline:
    """The pipeline of ``hooks`` (configs in run order, saved or not: the enabled ones)."""
    return pipeline.Pipeline([build_step(config, stash) for config in hooks if config.enabled])


def given_answers(example: Example) -> dict[int | str, pipeline.Decision]:
    """The answers ``example`` gives in place of outside services, by hook title, as decisions whose
    reason says the example gave them (a drop or hold has the code a service's answer has)."""
    answers: dict[int | str, pipeline.Decision] = {}
    for title, answer in (example.service_answers or {}).items():
        reason = str(answer.get("reason") or "")
        decision = answer_decision(answer.get("outcome", ""), reason)
        answers[title] = replace(decision, reason=f"{GIVEN}: {reason}" if reason else GIVEN)
    return answers


def _asynchronous(checked: pipeline.Pipeline) -> set[str]:
    """The titles of the pipeline's asynchronous steps (those an example may answer for)."""
    return {step.title for step in checked.judging if getattr(step.hook, "asynchronous", False)}


Answer = tuple["pipeline.Result | None", "pipeline.Result"]


def _run(
    examples: list[Example],
    stash: Stash,
    new: pipeline.Pipeline,
    old: pipeline.Pipeline | None = None,
    known: dict[int, pipeline.Result] | None = None,
    on_answer: Callable[[int], object] | None = None,
) -> list[Answer | None]:
    """Each example's answer (the live version's, unless ``old`` is None or it is ``known``; then
    the new pipeline's), or None for those not reached within ``STASH_EXAMPLES_TIMEOUT``;
    ``on_answer(count)`` as they come."""
    known = known or {}
    items = [pipeline.Item(payload=example.payload, stash=stash.slug, source="example") for example in examples]

    def step(index: int) -> Callable[[Callable[[str], None]], Answer]:
        def run(progress: Callable[[str], None]) -> Answer:
            def on_step(step: pipeline.Step) -> None:
                progress(f"example {examples[index].name!r}, hook {step.title!r}")

            # Each example alone, on scratch state (``looking``): nothing is counted, none counts for
            # another; an asynchronous hook's service is never asked (the example may answer for it).
            given = given_answers(examples[index])
            before = None if old is None or index in known else old.looking(given).run(items[index], on_step=on_step)
            return before, new.looking(given).run(items[index], on_step=on_step)

        return run

    steps = [step(index) for index in range(len(items))]
    answers, _late = gather_with_deadline(steps, settings.STASH_EXAMPLES_TIMEOUT, on_answer)
    return [*answers, *[None] * (len(items) - len(answers))]


def _answer_keys(stash: Stash, live: int, examples: list[Example]) -> list[str]:
    # What the live version answered depends on the version and on the example's content alone.
    return [
        f"stash:example-answer:{stash.pk}:{live}:"
        + hashlib.sha256(documents.dumps(documents.example_entries([example])[0]).encode()).hexdigest()
        for example in examples
    ]


def _known_answers(stash: Stash, live: int | None, examples: list[Example]) -> dict[int, pipeline.Result]:
    """The live version's answers to ``examples`` given before, by index (none when the cache fails)."""
    if live is None:
        return {}
    keys = _answer_keys(stash, live, examples)
    try:
        found = cache.get_many(keys)
    except Exception:  # the cache is an optimisation: run them again
        logger.warning("Cached answers of golden examples could not be read", exc_info=True)
        return {}
    return {index: found[key] for index, key in enumerate(keys) if key in found}


def _remember_answers(
    stash: Stash, live: int | None, examples: list[Example], learnt: dict[int, pipeline.Result]
) -> None:
    if live is None or not learnt:
        return
    keys = _answer_keys(stash, live, examples)
    try:
        cache.set_many({keys[index]: result for index, result in learnt.items()}, ANSWERS_KEPT_SECONDS)
    except Exception:
        logger.warning("Answers of golden examples could not be cached", exc_info=True)


def _compare(example: Example, result: pipeline.Result | None, asynchronous: set[str]) -> ExampleResult:
    if result is None:
        return ExampleResult(
            name=example.name,
            expected=example.verdict,
            verdict="",
            ran=False,
            expected_code=example.reason_code,
            expected_hook=example.hook,
        )
    decider = next((entry for entry in result.trail if entry.stopped), None)
    answered = example.service_answers or {}
    return ExampleResult(
        name=example.name,
        expected=example.verdict,
        verdict=result.verdict,
        reason=result.reason,
        code=result.code,
        hook=decider.title if decider is not None else "",
        expected_code=example.reason_code,
        expected_hook=example.hook,
        given=tuple(
            f"{entry.title}: {entry.outcome}"
            for entry in result.trail
            if entry.title in answered and entry.title in asynchronous and entry.outcome != pipeline.SKIPPED
        ),
        unmatched=tuple(sorted(set(answered) - asynchronous)),
    )


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
        raise ValueError(
            _("Item %(id)s has no verdict yet (it is %(status)s).") % {"id": content.pk, "status": content.status}
        )
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
                return Example.objects.create(
                    stash_id=content.stash_id,
                    name=name,
                    payload=payload,
                    verdict=verdict,
                    reason_code=code,
                    hook=decider_title(content) if same else "",
                    content=content,
                    created_by=user,
                )
        except IntegrityError:
            continue
    raise ValueError(_("Too many examples are named after item %(id)s.") % {"id": content.pk})
