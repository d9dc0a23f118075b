"""The pure pipeline runner: configured hooks in order -> a verdict and a per-hook trail.

Standard library only: no Django, no Celery. Plain data in, plain data out::

    pipeline = Pipeline([Step(hook=RequireFields({"fields": ["time"]}), name="require_fields")])
    result = pipeline.run(Item(payload={"text": "hi"}))
    result.verdict, result.reason      # ("rejected", "missing time")

Rules: steps run in the order given; the first enforcing filter that drops ends the run (the
item is rejected) and the first hold ends it as held; transforms chain; a step whose condition
is false is skipped; an observing step records what it would have done and changes nothing;
a step that raises or runs past its timeout is handled by its ``on_error`` policy (reject,
skip or hold) and recorded. ``run`` itself never raises for a hook's failure.

Verbose mode (``run(item, verbose=True)``, for simulations, like Elasticsearch's
``_simulate?verbose``) runs every step even after the run was decided: the step that decided it
is marked ``stopped``, the steps after it ``after_stop`` (they ran only because of verbose mode),
and each transform's entry carries the payload it produced. The verdict, reason and stored
payload are those of a normal run::

    result = pipeline.run(item, verbose=True)
    [(e.title, e.outcome, e.stopped, e.after_stop) for e in result.trail]

Lifecycle callbacks, in the spirit of a training loop's ``CallbackList``: any hook may define
``on_pipeline_start(item)`` and ``on_accept`` / ``on_reject`` / ``on_hold`` / ``on_error`` /
``on_pipeline_end(item, result)``; ``on_reversed(item, result)`` when a person reverses a rejection on
appeal. ``run`` calls none of them (a simulation has no side
effects); the caller does, in the order of ``LIFECYCLE_EVENTS``, through ``notify``.

Batched runs: ``run_many(items)`` judges many items and gives each the result ``run`` would give
it (verdict, payload, reason, trail), in order; a batched hook (one whose class defines its own
``filter_many(items)`` / ``transform_many(items)``, see ``batched``) is called once per step with
the items still alive at its position whose condition holds, every other hook once per item::

    results = pipeline.run_many([item1, item2, item3])

For a batched call: its timeout is the step's ``timeout`` times the number of items in it; if it
raises, times out or returns anything but one result per item, every item in it gets the error or
timeout entry one call would give, and its ``on_error`` policy decides each (items are not tried
again one at a time). Each item's trail entry shows its share of the call's time (the call's time
divided by its items, plus the time its own condition took). ``run(item)`` calls a batched hook
with a batch of one.

A step with ``cache_seconds`` reuses its hook's outcome for the same input (the fields it reads,
its config and the pipeline's ``version``) from the pipeline's ``cache`` (anything with
``get_many`` / ``set_many``, e.g. Django's cache): ``recall`` and ``remember`` work on a batch of
items at once, and the trail entry of a reused outcome says ``cached``. Failures are never kept;
a cache that fails only means the hook runs::

    Pipeline(steps, cache=cache, version=stash.config_version)

Asynchronous hooks: a filter may return ``pending()``, an answer still to come from an outside
service. The run stops there with the verdict ``waiting`` (``Result.waiting_at`` says at which
step; its payload and trail are what a resume needs), and ``Pipeline.resume`` goes on from that
step with the answer when it comes, as if the hook had given it at once::

    result = pipeline.run(item)                  # result.verdict == "waiting"
    at = result.waiting_at
    pipeline.resume(item, at, result.payload, result.trail[:at], pipeline.keep())

Runs that only look (simulate, replay, golden examples) run ``pipeline.looking()``, one per
item: no sinks, and each hook that declares ``side_effects`` works on a scratch copy of its
state (``hook.scratch()``), so it does what it would do and the real counters stay as they are.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import logging
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable, Mapping, Protocol, Sequence

logger = logging.getLogger(__name__)

# Verdicts.
ACCEPTED = "accepted"
REJECTED = "rejected"
HELD = "held"
#: The run stopped at an asynchronous hook, which awaits an outside service's answer (``pending``).
WAITING = "waiting"

# Outcomes of one step in the trail.
KEPT = "kept"
DROPPED = "dropped"
TRANSFORMED = "transformed"
SKIPPED = "skipped"
ERROR = "error"
TIMEOUT = "timeout"
OBSERVED = "observed"
OUTCOMES = (KEPT, DROPPED, TRANSFORMED, SKIPPED, ERROR, TIMEOUT, HELD, OBSERVED, WAITING)

# Modes and error policies.
ENFORCE = "enforce"
OBSERVE = "observe"
ON_ERROR_REJECT = "reject"
ON_ERROR_SKIP = "skip"
ON_ERROR_HOLD = "hold"

# Lifecycle callbacks, in the order one item's run calls them.
ON_PIPELINE_START = "on_pipeline_start"
ON_ACCEPT = "on_accept"
ON_REJECT = "on_reject"
ON_HOLD = "on_hold"
ON_ERROR = "on_error"
ON_PIPELINE_END = "on_pipeline_end"
LIFECYCLE_EVENTS = (ON_PIPELINE_START, ON_ACCEPT, ON_REJECT, ON_HOLD, ON_ERROR, ON_PIPELINE_END)
# Outside any run: a rejection reversed on appeal (``on_reversed(item, result)``, the result accepted).
ON_REVERSED = "on_reversed"


@dataclass(frozen=True)
class Decision:
    """What a filter says about one item: ``keep``, ``drop`` or ``hold``, with a reason; or
    ``pending``: an outside service will answer later (an asynchronous hook, see ``Pipeline.resume``)."""

    action: str
    reason: str = ""
    code: str = ""
    #: The payload field the decision is about (``"title"``, ``"meta.tags"``); blank when none is.
    field: str = ""


KEEP = Decision("keep")


def keep() -> Decision:
    return KEEP


def drop(reason: str, code: str = "dropped", field: str = "") -> Decision:
    return Decision("drop", reason, code, field)


def hold(reason: str, code: str = "held", field: str = "") -> Decision:
    return Decision("hold", reason, code, field)


def pending(reason: str = "waiting for an outside service", code: str = "waiting") -> Decision:
    """The answer is still to come: the run stops here with the verdict ``waiting`` and is resumed
    (``Pipeline.resume``) when it comes. Filters only; an observing step records "would wait"."""
    return Decision("pending", reason, code)


@dataclass(frozen=True)
class Item:
    """The read-only view of one content item that hooks see."""

    payload: Mapping[str, Any]
    id: str | None = None
    stash: str = ""
    revision: int = 1
    source: str = ""
    submitted_by: str | None = None
    created_at: datetime | None = None  # when it was submitted
    content_hash: str = ""  # of the payload as submitted
    #: Asynchronous hooks only: the URL at which the outside service answers for this item, by
    #: hook config id (``Step.config_id``); each hook reads its own.
    callbacks: Mapping[int, str] = field(default_factory=dict)

    def as_context(self) -> dict[str, Any]:
        """The variables a condition can read."""
        return {
            "payload": self.payload,
            "meta": {
                "stash": self.stash,
                "source": self.source,
                "revision": self.revision,
                "submitted_by": self.submitted_by or "",
            },
        }


class HookTimeout(BaseException):
    """Raised inside a hook that ran past its time; its message, if any, is the trail's.

    A ``BaseException`` so that a hook's own ``except Exception`` cannot swallow it.
    """


@dataclass(frozen=True)
class Step:
    """One configured hook, in pipeline order.

    ``hook`` has a ``kind`` ("filter", "transform" or "sink") and the method of its kind:
    ``filter(item) -> Decision`` or ``transform(item) -> dict | None`` (None: unchanged).
    """

    hook: Any
    name: str
    label: str = ""
    config_id: int | None = None
    position: int = 0
    mode: str = ENFORCE
    on_error: str = ON_ERROR_REJECT
    condition: Callable[[Mapping[str, Any]], bool] | None = None
    timeout: float | None = None  # seconds
    #: Seconds the hook's outcome for an input is reused (0: never; see ``Pipeline.recall``).
    cache_seconds: int = 0
    #: The payload fields the hook reads (dotted paths), which key its cached outcome; None: the whole payload.
    cache_fields: tuple[str, ...] | None = None

    @property
    def kind(self) -> str:
        kind: str = self.hook.kind
        return kind

    @property
    def title(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class TrailEntry:
    """What one step did to one item."""

    hook: str
    label: str
    config_id: int | None
    position: int
    outcome: str
    code: str = ""
    message: str = ""
    duration_ms: float = 0.0
    #: What an observing step would have done ("drop", "hold" or "transform"); blank otherwise.
    would: str = ""
    #: This step decided the run: it rejected or held the item (in verbose mode: it would have
    #: ended the run there).
    stopped: bool = False
    #: Verbose mode only: the run was decided before this step, which ran only to be shown.
    after_stop: bool = False
    #: Verbose mode only: the payload a transform produced (an observing one: would have
    #: produced); None for filters and for a transform that changed nothing.
    payload: Mapping[str, Any] | None = None
    #: The payload field a filter's decision is about, when it named one.
    field: str = ""
    #: The hook was not called: its outcome for the same input was reused (``Step.cache_seconds``).
    cached: bool = False

    @property
    def title(self) -> str:
        """The step's label, or its hook's name."""
        return self.label or self.hook

    def as_dict(self, verbose: bool = False) -> dict[str, Any]:
        """The entry as JSON-ready data, as runs store it; ``verbose`` adds ``stopped``,
        ``after_stop`` and ``payload``."""
        data: dict[str, Any] = {
            "config_id": self.config_id,
            "hook": self.hook,
            "label": self.label,
            "position": self.position,
            "outcome": self.outcome,
            "code": self.code,
            "message": self.message,
            "duration_ms": round(self.duration_ms, 3),
            "would": self.would,
        }
        if self.field:
            data["field"] = self.field
        if self.cached:
            data["cached"] = True
        if verbose:
            data.update(
                stopped=self.stopped,
                after_stop=self.after_stop,
                payload=None if self.payload is None else dict(self.payload),
            )
        return data


@dataclass(frozen=True)
class Result:
    """The verdict on one item, the payload to store and the trail that explains it."""

    verdict: str
    payload: Mapping[str, Any]
    transformed: bool = False
    reason: str = ""
    code: str = ""
    decided_by: int | None = None
    trail: tuple[TrailEntry, ...] = field(default_factory=tuple)
    duration_ms: float = 0.0
    #: Run in verbose mode: every step ran, and the trail says which ran past the verdict.
    verbose: bool = False

    @property
    def waiting_at(self) -> int | None:
        """The verdict ``waiting``: the index, among the pipeline's judging steps, of the step that
        waits (what ``Pipeline.resume`` takes as ``position``); None for any other verdict."""
        if self.verdict != WAITING:
            return None
        return next(index for index, entry in enumerate(self.trail) if entry.outcome == WAITING and entry.stopped)

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data, as the API and ``stash_simulate --json`` show it."""
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "code": self.code,
            "decided_by": self.decided_by,
            "transformed": self.transformed,
            "payload": dict(self.payload),
            "duration_ms": self.duration_ms,
            "verbose": self.verbose,
            "trail": [entry.as_dict(self.verbose) for entry in self.trail],
        }


class _Deadline:
    """Interrupts the running hook with ``HookTimeout`` once its time is up.

    Uses ``SIGALRM`` and so works in the main thread of a process (a Celery prefork or solo
    worker, a management command). Elsewhere it cannot interrupt, and a step that overran is
    recorded as a timeout when it returns.
    """

    def __init__(self) -> None:
        self.armed = False
        self.usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        self._previous: Any = None

    def __enter__(self) -> _Deadline:
        if self.usable:
            self._previous = signal.signal(signal.SIGALRM, self._expire)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.usable:
            self.disarm()
            signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)

    def _expire(self, signum: int, frame: object) -> None:
        if self.armed:
            self.armed = False
            raise HookTimeout()

    def arm(self, seconds: float | None) -> None:
        if self.usable and seconds:
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, seconds)

    def disarm(self) -> None:
        if self.armed:
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)


class Pipeline:
    """An ordered list of steps that judges items. Build once, run many times."""

    def __init__(self, steps: Sequence[Step], *, cache: OutcomeCache | None = None, version: int = 0) -> None:
        """``cache``: where the outcomes of steps with ``cache_seconds`` are kept, for this
        pipeline ``version`` (the stash's ``config_version``: a change of params moves it); None:
        every hook runs every time."""
        self.steps = tuple(steps)
        self.cache = cache
        self.version = version
        self.judging = tuple(s for s in self.steps if s.kind in ("filter", "transform"))
        self.sinks = tuple(s for s in self.steps if s.kind == "sink")
        self._batched = tuple(batched(s.hook) for s in self.judging)

    @property
    def has_batched(self) -> bool:
        """True if a judging step's hook is batched (see ``batched``)."""
        return any(self._batched)

    @property
    def budget(self) -> float:
        """Seconds one run may take when every judging step uses its whole timeout (a step
        without one counts nothing): the time a worker must allow an item."""
        return sum(step.timeout or 0 for step in self.judging)

    def stopping(self, config_id: int | None, message: str) -> Pipeline:
        """This pipeline with the step of ``config_id`` timed out at once, with ``message``.

        For a hook that ran past its time where nothing could interrupt it, and whose process
        was stopped: the next run records it as a timeout, and its ``on_error`` policy decides,
        without calling it again::

            pipeline.stopping(7, "stopped with its worker").run(item)
        """
        # Its condition is not evaluated again either: it may be what hung.
        return Pipeline(
            [
                replace(step, hook=_Stopped(step.kind, message), condition=None, cache_seconds=0)
                if step.config_id == config_id
                else step
                for step in self.steps
            ],
            cache=self.cache,
            version=self.version,
        )

    def looking(self, answers: Mapping[int | str, Decision] | None = None) -> Pipeline:
        """This pipeline for one item's run that only looks (simulate, replay, golden examples):
        its filters and transforms, each hook that declares ``side_effects`` replaced by its
        ``scratch()`` copy (the real state is read, never written), no sinks and no outcome cache::

            result = pipeline.looking().run(item)   # rate_limit counts this item on a scratch count

        An asynchronous hook (``asynchronous`` true) is never called: it returns ``pending()`` (the
        run says the item would wait), or the answer ``answers`` gives for its config id, or else
        for its title (its label, or its hook's name: as documents and golden examples name it).
        """
        return Pipeline([_looking_step(step, answers or {}) for step in self.judging])

    def listeners(self, event: str) -> tuple[Step, ...]:
        """The steps, of any kind and in order, whose hook takes the lifecycle callback ``event``."""
        return tuple(s for s in self.steps if listens(s.hook, event))

    def run(self, item: Item, *, on_step: Callable[[Step], None] | None = None, verbose: bool = False) -> Result:
        """Judge ``item``. ``on_step(step)`` is called before each step runs (progress notes).

        ``verbose``: run every step, past the one that decides (see the module docstring); the
        result is the same as without it, the trail longer.
        """
        started = time.perf_counter()
        payload = item.payload
        transformed = False
        trail: list[TrailEntry] = []
        verdict, reason, code, decided_by = ACCEPTED, "", "", None
        decided: tuple[Mapping[str, Any], bool] | None = None  # the payload when decided, and transformed

        with _Deadline() as deadline:
            for step, is_batched in zip(self.judging, self._batched, strict=True):
                if on_step is not None:
                    on_step(step)
                current = item if payload is item.payload else replace(item, payload=payload)
                if is_batched:
                    entry, new_payload, stop = self._run_batched(step, [current], deadline, verbose)[0]
                else:
                    entry, new_payload, stop = self._run_step(step, current, deadline, verbose)
                if new_payload is not None:
                    payload, transformed = new_payload, True
                if decided is not None:
                    trail.append(replace(entry, stopped=False, after_stop=True))
                    continue
                trail.append(entry)
                if stop is not None:
                    verdict, reason, code, decided_by = stop, entry.message, entry.code, step.config_id
                    decided = (payload, transformed)
                    if not verbose:
                        break
        if decided is not None:
            payload, transformed = decided

        return Result(
            verdict=verdict,
            payload=payload,
            transformed=transformed,
            reason=reason,
            code=code,
            decided_by=decided_by,
            trail=tuple(trail),
            duration_ms=(time.perf_counter() - started) * 1000,
            verbose=verbose,
        )

    def run_many(
        self, items: Sequence[Item], *, on_step: Callable[[Step], None] | None = None, verbose: bool = False
    ) -> list[Result]:
        """Judge ``items``: for each, in order, the result ``run`` gives it. Steps run in order, each
        for every item still alive at it (batched hooks once for all of them, see the module
        docstring); ``on_step(step)`` is called once before each step that runs for any item."""
        started = time.perf_counter()
        runs = [_ItemRun(item) for item in items]
        self._run_steps(runs, 0, on_step, verbose)
        # Each item's time: its own steps' entries, and its share of the time the runner took besides.
        spent = [sum(entry.duration_ms for entry in r.trail) for r in runs]
        overhead = max(0.0, (time.perf_counter() - started) * 1000 - sum(spent)) / max(1, len(runs))
        return [r.result(ms + overhead, verbose) for r, ms in zip(runs, spent, strict=True)]

    def resume(
        self,
        item: Item,
        position: int,
        payload: Mapping[str, Any],
        trail: Sequence[TrailEntry],
        decision: Decision | BaseException,
        *,
        duration_ms: float = 0.0,
        on_step: Callable[[Step], None] | None = None,
    ) -> Result:
        """Go on with a run that waited (verdict ``waiting``) at judging step ``position`` (its
        ``Result.waiting_at``), now that the answer is ``decision``. ``payload`` and ``trail`` are
        the run's as it waited (its result's payload, its trail without the waiting entry).

        ``decision`` becomes that step's entry as if the hook had returned it (its mode and
        ``on_error`` apply); an exception stands for a failure: ``HookTimeout`` (no answer in
        time) a timeout, any other an error. The steps after it then run as ``run`` runs them; a
        later asynchronous step may wait again::

            first = pipeline.run(item)                       # first.verdict == "waiting"
            at = first.waiting_at
            later = pipeline.resume(item, at, first.payload, first.trail[:at], pipeline.drop("toxic"))
        """
        started = time.perf_counter()
        step = self.judging[position]
        state = _ItemRun(item)
        state.payload = payload
        state.transformed = any(entry.outcome == TRANSFORMED for entry in trail)
        state.trail = list(trail)
        entry = functools.partial(_entry, step, False, duration_ms)
        if isinstance(decision, HookTimeout):
            taken = self._failed(step, entry, TIMEOUT, "timeout", str(decision) or "no answer in time")
        elif isinstance(decision, BaseException):
            taken = self._failed(step, entry, ERROR, "hook_error", f"{type(decision).__name__}: {decision}")
        else:
            taken = self._judged(step, entry, decision)
        state.take(step, *taken, verbose=False)
        if state.decided is None:
            self._run_steps([state], position + 1, on_step, False)
        return state.result((time.perf_counter() - started) * 1000 + duration_ms, False)

    def _run_steps(
        self, runs: list[_ItemRun], start: int, on_step: Callable[[Step], None] | None, verbose: bool
    ) -> None:
        """Run the judging steps from index ``start`` on for ``runs`` (see ``run_many``)."""
        with _Deadline() as deadline:
            for index, (step, is_batched) in enumerate(zip(self.judging, self._batched, strict=True)):
                if index < start:
                    continue
                alive = runs if verbose else [r for r in runs if r.decided is None]
                if not alive:
                    break
                if on_step is not None:
                    on_step(step)
                currents = [r.current() for r in alive]
                if is_batched:
                    outcomes = self._run_batched(step, currents, deadline, verbose)
                else:
                    outcomes = [self._run_step(step, current, deadline, verbose) for current in currents]
                for r, (entry, new_payload, stop) in zip(alive, outcomes, strict=True):
                    r.take(step, entry, new_payload, stop, verbose)

    def _run_step(
        self, step: Step, item: Item, deadline: _Deadline, verbose: bool = False
    ) -> tuple[TrailEntry, Any, str | None]:
        """Run one step: its trail entry, a new payload or None, and the verdict if it ends the run.
        ``verbose``: the entry of a transform that changed the payload carries the new one."""
        started = time.perf_counter()
        reused = False  # the outcome came from the cache: the entry says so

        def entry(
            outcome: str,
            code: str = "",
            message: str = "",
            would: str = "",
            stopped: bool = False,
            payload: Mapping[str, Any] | None = None,
            field: str = "",
        ) -> TrailEntry:
            elapsed = (time.perf_counter() - started) * 1000
            return _entry(step, verbose, elapsed, outcome, code, message, would, stopped, payload, field, cached=reused)

        timed_out = f"timed out after {_ms(step.timeout)} ms"
        recalled = self.recall(step, [item])[0]  # looked up before its time starts: a slow cache is no timeout
        try:
            try:
                deadline.arm(step.timeout)
                if step.condition is not None and not step.condition(item.as_context()):
                    deadline.disarm()
                    return entry(SKIPPED, "condition", "condition not met"), None, None
                if recalled is not MISSING:
                    outcome, reused = recalled, True
                elif step.kind == "filter":
                    outcome = step.hook.filter(item)
                else:
                    outcome = step.hook.transform(_own_copy(item))
                deadline.disarm()
            except Exception as exc:  # a hook's failure is data, not a crash
                deadline.disarm()
                return self._failed(step, entry, ERROR, "hook_error", f"{type(exc).__name__}: {exc}")
        except HookTimeout as exc:  # outside the inner handler too: the alarm may ring while it runs
            return self._failed(step, entry, TIMEOUT, "timeout", str(exc) or timed_out)

        if step.timeout and time.perf_counter() - started > step.timeout:
            # Could not be interrupted (not the main thread): still over its time.
            return self._failed(step, entry, TIMEOUT, "timeout", timed_out)
        if recalled is MISSING:
            self.remember(step, [item], [outcome])
        if step.kind == "filter":
            return self._judged(step, entry, outcome)
        return self._transformed(step, entry, item, outcome)

    def _run_batched(
        self, step: Step, items: list[Item], deadline: _Deadline, verbose: bool
    ) -> list[tuple[TrailEntry, Any, str | None]]:
        """Run a batched step for ``items``: each one's condition, then one call for those it holds
        for; what ``_run_step`` gives each item (see the module docstring for a failed call)."""
        results: list[tuple[TrailEntry, Any, str | None] | None] = [None] * len(items)
        condition_ms = [0.0] * len(items)
        calling: list[int] = []
        timed_out = f"timed out after {_ms(step.timeout)} ms"
        for index, item in enumerate(items):
            if step.condition is None:
                calling.append(index)
                continue
            started = time.perf_counter()
            failure: tuple[str, str, str] | None = None
            holds = False
            try:
                try:
                    deadline.arm(step.timeout)
                    holds = bool(step.condition(item.as_context()))
                    deadline.disarm()
                except Exception as exc:
                    deadline.disarm()
                    failure = (ERROR, "hook_error", f"{type(exc).__name__}: {exc}")
            except HookTimeout as exc:
                failure = (TIMEOUT, "timeout", str(exc) or timed_out)
            condition_ms[index] = (time.perf_counter() - started) * 1000
            entry = functools.partial(_entry, step, verbose, condition_ms[index])
            if failure is not None:
                results[index] = self._failed(step, entry, *failure)
            elif not holds:
                results[index] = (entry(SKIPPED, "condition", "condition not met"), None, None)
            else:
                calling.append(index)
        if calling:
            self._call_batched(step, items, calling, condition_ms, results, deadline, verbose)
        return [result for result in results if result is not None]

    def _call_batched(
        self,
        step: Step,
        items: list[Item],
        calling: list[int],
        condition_ms: list[float],
        results: list[tuple[TrailEntry, Any, str | None] | None],
        deadline: _Deadline,
        verbose: bool,
    ) -> None:
        """Call a batched step once for the items at ``calling`` and fill in their ``results``."""
        batch = [items[index] for index in calling]
        # Outcomes kept for the same input are reused; only the misses reach the hook.
        recalled = self.recall(step, batch)
        missed = [position for position, found in enumerate(recalled) if found is MISSING]
        asked = [batch[position] for position in missed]
        timeout = step.timeout * len(asked) if step.timeout else None
        failure: tuple[str, str, str] | None = None
        outcomes: Any = []
        started = time.perf_counter()
        try:
            try:
                deadline.arm(timeout)
                if not asked:
                    outcomes = []
                elif step.kind == "filter":
                    outcomes = step.hook.filter_many(asked)
                else:
                    outcomes = step.hook.transform_many([_own_copy(item) for item in asked])
                deadline.disarm()
            except Exception as exc:  # a hook's failure is data, not a crash
                deadline.disarm()
                failure = (ERROR, "hook_error", f"{type(exc).__name__}: {exc}")
        except HookTimeout as exc:
            failure = (TIMEOUT, "timeout", str(exc) or f"timed out after {_ms(step.timeout)} ms")
        elapsed = time.perf_counter() - started
        if failure is None and timeout and elapsed > timeout:
            failure = (TIMEOUT, "timeout", f"timed out after {_ms(step.timeout)} ms")
        if failure is None and (not isinstance(outcomes, (list, tuple)) or len(outcomes) != len(asked)):
            got = f"{len(outcomes)} results" if isinstance(outcomes, (list, tuple)) else type(outcomes).__name__
            failure = (ERROR, "bad_return", f"returned {got}, not one result for each of {len(asked)} items")
        if failure is None:
            self.remember(step, asked, outcomes)
            for position, outcome in zip(missed, outcomes, strict=True):
                recalled[position] = outcome
        share = elapsed * 1000 / max(len(asked), 1)
        fresh = set(missed)
        for position, index in enumerate(calling):
            reused = position not in fresh
            took = condition_ms[index] + (0.0 if reused else share)
            entry = functools.partial(_entry, step, verbose, took, cached=reused)
            if failure is not None and not reused:
                results[index] = self._failed(step, entry, *failure)
            elif step.kind == "filter":
                results[index] = self._judged(step, entry, recalled[position])
            else:
                results[index] = self._transformed(step, entry, items[index], recalled[position])

    # --- the outcome cache (``Step.cache_seconds``) ------------------------------------------
    # Per step and per batch of items: ``recall`` once for the items that reach the step, the hook
    # for those it missed, ``remember`` what the hook returned for them.

    def caches(self, step: Step) -> bool:
        """True if ``step``'s outcomes are kept: it has ``cache_seconds`` and a config id, and this
        pipeline a cache."""
        return self.cache is not None and step.cache_seconds > 0 and step.config_id is not None

    def recall(self, step: Step, items: Sequence[Item]) -> list[Any]:
        """What ``step``'s hook returned before for each of ``items``' input (the same fields
        read, the same config and pipeline version): a ``Decision`` for a filter, the payload to
        go on with (or None: unchanged) for a transform, or ``MISSING``. One ``get_many``; a cache
        that fails misses."""
        if not items or not self.caches(step):
            return [MISSING] * len(items)
        keys = [self._cache_key(step, item) for item in items]
        try:
            found = self.cache.get_many([key for key in keys if key]) if self.cache is not None else {}
        except Exception as exc:  # a cache down: the hook runs
            logger.warning("The hook outcome cache cannot be read: %s", exc)
            return [MISSING] * len(items)
        return [
            _decoded(step.kind, found.get(key), item) if key else MISSING for key, item in zip(keys, items, strict=True)
        ]

    def remember(self, step: Step, items: Sequence[Item], outcomes: Sequence[Any]) -> None:
        """Keep what ``step``'s hook returned for ``items`` (one ``set_many``, for the step's
        ``cache_seconds``). Only what it returned in time and in the right shape is kept: never a
        failure. A cache that fails is left alone."""
        if not self.caches(step):
            return
        entries = {}
        for item, outcome in zip(items, outcomes, strict=True):
            key, value = self._cache_key(step, item), _encoded(step.kind, outcome, item)
            if key and value is not None:
                entries[key] = value
        if not entries or self.cache is None:
            return
        try:
            self.cache.set_many(entries, step.cache_seconds)
        except Exception as exc:
            logger.warning("The hook outcome cache cannot be written: %s", exc)

    def _cache_key(self, step: Step, item: Item) -> str:
        """The key of ``step``'s outcome for ``item``: a hash of its config id and hook, the
        pipeline version and the canonical JSON of what it reads ("" when that is not JSON)."""
        if step.cache_fields is None:
            read: Any = item.payload
        else:
            read = [[name, *_at(item.payload, name)] for name in step.cache_fields]
        try:
            text = json.dumps(
                [step.config_id, step.name, self.version, read], sort_keys=True, separators=(",", ":"), allow_nan=False
            )
        except (TypeError, ValueError):
            return ""
        return "hook-outcome:" + hashlib.sha256(text.encode()).hexdigest()

    @staticmethod
    def _judged(step: Step, entry: Callable[..., TrailEntry], decision: Any) -> tuple[TrailEntry, Any, str | None]:
        if not isinstance(decision, Decision):
            return Pipeline._failed(
                step, entry, ERROR, "bad_return", f"returned {type(decision).__name__}, not keep(), drop() or hold()"
            )
        if decision.action == "keep":
            return entry(KEPT, decision.code, decision.reason), None, None
        if decision.action == "pending" and step.kind != "filter":
            return Pipeline._failed(step, entry, ERROR, "bad_return", "returned pending(), which only filters may")
        if decision.action == "pending":
            if step.mode == OBSERVE:
                return entry(OBSERVED, decision.code, f"would wait: {decision.reason}", would="wait"), None, None
            return entry(WAITING, decision.code, decision.reason, stopped=True), None, WAITING
        verdict = REJECTED if decision.action == "drop" else HELD
        if step.mode == OBSERVE:
            return (
                entry(
                    OBSERVED,
                    decision.code,
                    f"would {decision.action}: {decision.reason}",
                    would=decision.action,
                    field=decision.field,
                ),
                None,
                None,
            )
        outcome = DROPPED if verdict == REJECTED else HELD
        return entry(outcome, decision.code, decision.reason, stopped=True, field=decision.field), None, verdict

    @staticmethod
    def _transformed(
        step: Step, entry: Callable[..., TrailEntry], item: Item, new_payload: Any
    ) -> tuple[TrailEntry, Any, str | None]:
        if new_payload is None:
            return entry(KEPT, "unchanged"), None, None
        if not isinstance(new_payload, Mapping):
            return Pipeline._failed(
                step, entry, ERROR, "bad_return", f"returned {type(new_payload).__name__}, not a payload object"
            )
        changed = _changed_keys(item.payload, new_payload)
        if not changed:
            return entry(KEPT, "unchanged"), None, None
        message = "changed " + ", ".join(changed)
        if step.mode == OBSERVE:
            return (
                entry(OBSERVED, "transformed", "would have " + message, would="transform", payload=dict(new_payload)),
                None,
                None,
            )
        new_payload = dict(new_payload)
        return entry(TRANSFORMED, "transformed", message, payload=new_payload), new_payload, None

    @staticmethod
    def _failed(
        step: Step, entry: Callable[..., TrailEntry], outcome: str, code: str, message: str
    ) -> tuple[TrailEntry, Any, str | None]:
        if step.mode == OBSERVE or step.on_error == ON_ERROR_SKIP:
            return entry(outcome, code, message), None, None
        verdict = HELD if step.on_error == ON_ERROR_HOLD else REJECTED
        return entry(outcome, code, f"{step.title}: {message}", stopped=True), None, verdict


class _ItemRun:
    """One item's run in ``Pipeline.run_many``: its payload so far, its trail, its verdict."""

    __slots__ = ("item", "payload", "transformed", "trail", "verdict", "reason", "code", "decided_by", "decided")

    def __init__(self, item: Item) -> None:
        self.item = item
        self.payload: Mapping[str, Any] = item.payload
        self.transformed = False
        self.trail: list[TrailEntry] = []
        self.verdict, self.reason, self.code = ACCEPTED, "", ""
        self.decided_by: int | None = None
        self.decided: tuple[Mapping[str, Any], bool] | None = None  # the payload when decided, and transformed

    def current(self) -> Item:
        """The item as the next step sees it: with the payload the transforms so far made."""
        return self.item if self.payload is self.item.payload else replace(self.item, payload=self.payload)

    def take(self, step: Step, entry: TrailEntry, new_payload: Any, stop: str | None, verbose: bool) -> None:
        """Add what ``step`` did: its entry, its new payload, the verdict if it ended the run."""
        if new_payload is not None:
            self.payload, self.transformed = new_payload, True
        if self.decided is not None:
            self.trail.append(replace(entry, stopped=False, after_stop=True))
            return
        self.trail.append(entry)
        if stop is not None:
            self.verdict, self.reason, self.code, self.decided_by = stop, entry.message, entry.code, step.config_id
            self.decided = (self.payload, self.transformed)

    def result(self, duration_ms: float, verbose: bool) -> Result:
        payload, transformed = self.decided if self.decided is not None else (self.payload, self.transformed)
        return Result(
            verdict=self.verdict,
            payload=payload,
            transformed=transformed,
            reason=self.reason,
            code=self.code,
            decided_by=self.decided_by,
            trail=tuple(self.trail),
            duration_ms=duration_ms,
            verbose=verbose,
        )


def _entry(
    step: Step,
    verbose: bool,
    duration_ms: float,
    outcome: str,
    code: str = "",
    message: str = "",
    would: str = "",
    stopped: bool = False,
    payload: Mapping[str, Any] | None = None,
    field: str = "",
    *,
    cached: bool = False,
) -> TrailEntry:
    """``step``'s trail entry; ``payload`` is kept in verbose mode only; ``cached``: a reused outcome."""
    return TrailEntry(
        hook=step.name,
        label=step.label,
        config_id=step.config_id,
        position=step.position,
        outcome=outcome,
        code=code,
        message=message,
        duration_ms=duration_ms,
        would=would,
        stopped=stopped,
        payload=payload if verbose else None,
        field=field,
        cached=cached,
    )


def per_item(method: Callable[..., Any]) -> Callable[..., Any]:
    """Marks the hook base classes' ``filter_many`` / ``transform_many``, which call the
    single-item method for each item: a hook that keeps them is not batched."""
    method.per_item = True  # type: ignore[attr-defined]
    return method


def batched(hook: Any) -> bool:
    """True if ``hook`` judges many items in one call: its class defines its own
    ``filter_many`` (a filter) or ``transform_many`` (a transform)."""
    name = {"filter": "filter_many", "transform": "transform_many"}.get(getattr(hook, "kind", ""))
    method = getattr(type(hook), name, None) if name else None
    return method is not None and not getattr(method, "per_item", False)


def _looking_step(step: Step, answers: Mapping[int | str, Decision]) -> Step:
    if getattr(step.hook, "asynchronous", False):
        answer = answers.get(step.config_id) if step.config_id is not None else None
        answer = answers.get(step.title) if answer is None else answer
        return replace(step, hook=_Answered(answer), cache_seconds=0)
    if getattr(step.hook, "side_effects", False):
        return replace(step, hook=step.hook.scratch())
    return step


class _Answered:
    """Stands in for an asynchronous hook in a run that only looks: the service is not asked; the
    item would wait, or has the answer given in its place."""

    kind = "filter"

    def __init__(self, answer: Decision | None) -> None:
        self.answer = answer

    def filter(self, item: Item) -> Decision:
        return self.answer or pending("would wait for the outside service's answer")


class _Stopped:
    """Stands in for a hook that was stopped: it times out at once (see ``Pipeline.stopping``)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message

    def filter(self, item: Item) -> Decision:
        raise HookTimeout(self.message)

    def transform(self, item: Item) -> None:
        raise HookTimeout(self.message)


def listens(hook: Any, event: str) -> bool:
    """True if ``hook`` defines the callback ``event`` and, when it has ``listens_to``, wants it.

    A ``listens_to`` that raises counts as not wanting it: one hook's bug never stops a batch.
    """
    if not callable(getattr(hook, event, None)):
        return False
    wants = getattr(hook, "listens_to", None)
    try:
        return wants is None or bool(wants(event))
    except Exception:
        return False


def notify(steps: Sequence[Step], event: str, item: Item, result: Result | None = None) -> list[tuple[Step, str]]:
    """Call ``event`` ("on_accept", "on_pipeline_start", ...) on each step's hook that listens.

    The callback gets ``(item, result)``, or ``(item)`` alone when ``result`` is None (the
    start of a run). A hook that raises does not stop the others: its failure is returned as
    ``(step, message)``.
    """
    failures = []
    for step in steps:
        if not listens(step.hook, event):
            continue
        callback = getattr(step.hook, event)
        try:
            if result is None:
                callback(item)
            else:
                callback(item, result)
        except Exception as exc:
            failures.append((step, f"{type(exc).__name__}: {exc}"))
    return failures


def result_events(result: Result) -> tuple[str, ...]:
    """The callbacks a finished run calls after its verdict is stored, in order.

    The verdict's own (``on_accept``, ``on_reject`` or ``on_hold``), then ``on_error`` if a
    step raised or timed out, whatever its policy made of it.
    """
    events = [verdict_event(result.verdict)]
    if any(entry.outcome in (ERROR, TIMEOUT) for entry in result.trail):
        events.append(ON_ERROR)
    return tuple(events)


def verdict_event(verdict: str) -> str:
    """The sink callback that a verdict calls."""
    return {ACCEPTED: ON_ACCEPT, REJECTED: ON_REJECT, HELD: ON_HOLD}[verdict]


class OutcomeCache(Protocol):
    """Where hook outcomes are kept (``Pipeline(cache=...)``): Django's cache has these methods."""

    def get_many(self, keys: list[str]) -> Mapping[str, Any]: ...

    def set_many(self, data: dict[str, Any], timeout: int) -> Any: ...


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: No outcome kept for this input (``Pipeline.recall``).
MISSING: Any = _Missing()


def _at(payload: Mapping[str, Any], path: str) -> list[Any]:
    """``[True, value]`` at the dotted ``path`` of ``payload``, or ``[False]`` when it has none."""
    value: Any = payload
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return [False]
        value = value[part]
    return [True, value]


def _encoded(kind: str, outcome: Any, item: Item) -> Any:
    """What the cache keeps of a hook's ``outcome`` for ``item`` (None: not kept). A transform's is
    the change it made (fields set and removed), applied again to the next payload with the
    same input: the fields it did not touch stay those of that payload."""
    if kind == "filter":
        if not isinstance(outcome, Decision) or outcome.action not in ("keep", "drop", "hold"):
            return None  # not a verdict (a failure, or an answer still to come): never kept
        return ["decision", outcome.action, outcome.reason, outcome.code, outcome.field]
    if outcome is None:
        return ["payload", {}, []]
    if not isinstance(outcome, Mapping):
        return None
    before = item.payload
    changed = {key: value for key, value in outcome.items() if key not in before or before[key] != value}
    return ["payload", copy.deepcopy(changed), sorted(key for key in before if key not in outcome)]


def _decoded(kind: str, value: Any, item: Item) -> Any:
    """The outcome a kept ``value`` stands for, for ``item``; ``MISSING`` if it is none or not one."""
    try:
        if kind == "filter" and value[0] == "decision":
            action, reason, code, field_ = value[1:5]
            if action in ("keep", "drop", "hold") and all(isinstance(v, str) for v in (reason, code, field_)):
                return Decision(action, reason, code, field_)
        elif kind == "transform" and value[0] == "payload":
            changed, removed = value[1], value[2]
            if not changed and not removed:
                return None
            payload = {key: value for key, value in copy.deepcopy(dict(item.payload)).items() if key not in removed}
            payload.update(copy.deepcopy(changed))
            return payload
    except (TypeError, IndexError, KeyError, ValueError, AttributeError):
        pass
    return MISSING


def _own_copy(item: Item) -> Item:
    """A transform gets a payload of its own to change: the caller's stays intact."""
    return replace(item, payload=copy.deepcopy(dict(item.payload)))


def _changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    keys = set(before) | set(after)
    return sorted(k for k in keys if k not in before or k not in after or before[k] != after[k])


def _ms(seconds: float | None) -> int:
    return int((seconds or 0) * 1000)
