"""Batched and one-at-a-time runs agree: ``run_many(items)`` gives each item what ``run(item)`` gives it.

Random pipelines of small pure hooks (filters that keep, drop or hold by a rule on the payload,
transforms that add or change fields; some batched, some raising; conditions, observe mode, each
``on_error`` policy) and random items. Durations are left out of the comparison.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings, strategies as st

from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step


class Rule:
    """A filter: ``action`` when ``payload[field]`` (0 when missing) is at least ``at``; raises
    on a payload whose ``boom`` equals ``boom`` (a per-item failure), or always (``fails``)."""

    kind = "filter"

    def __init__(self, field: str, at: int, action: str, boom: int | None, fails: str) -> None:
        self.field, self.at, self.action, self.boom, self.fails = field, at, action, boom, fails

    def filter(self, item: Item) -> pipeline.Decision:
        if self.fails == "error":
            raise RuntimeError("model not loaded")
        if self.fails == "timeout":
            raise pipeline.HookTimeout("gave up")
        if self.boom is not None and item.payload.get("boom") == self.boom:
            raise ValueError(f"boom {self.boom}")
        value = item.payload.get(self.field, 0)
        if value < self.at:
            return pipeline.keep()
        if self.action == "drop":
            return pipeline.drop(f"{self.field} is {value}", "too_big", self.field)
        return pipeline.hold(f"{self.field} is {value}", "look", self.field)


class BatchedRule(Rule):
    """The same rule, judged a batch at a time (a failure fails the whole call, so only ``fails``)."""

    def filter_many(self, items: list[Item]) -> list[pipeline.Decision]:
        if self.fails == "error":
            raise RuntimeError("model not loaded")
        if self.fails == "timeout":
            raise pipeline.HookTimeout("gave up")
        values = [item.payload.get(self.field, 0) for item in items]
        return [
            pipeline.keep()
            if value < self.at
            else pipeline.drop(f"{self.field} is {value}", "too_big", self.field)
            if self.action == "drop"
            else pipeline.hold(f"{self.field} is {value}", "look", self.field)
            for value in values
        ]


class Change:
    """A transform: adds ``by`` to ``payload[field]`` (a new field starts at 0), or changes nothing
    (``noop``: returns None; ``same``: returns the payload unchanged); raises like ``Rule``."""

    kind = "transform"

    def __init__(self, field: str, by: int, how: str, boom: int | None, fails: str) -> None:
        self.field, self.by, self.how, self.boom, self.fails = field, by, how, boom, fails

    def transform(self, item: Item) -> Any:
        if self.fails == "error":
            raise RuntimeError("model not loaded")
        if self.fails == "timeout":
            raise pipeline.HookTimeout("gave up")
        if self.boom is not None and item.payload.get("boom") == self.boom:
            raise ValueError(f"boom {self.boom}")
        return self._change(dict(item.payload))

    def _change(self, payload: dict[str, Any]) -> Any:
        if self.how == "noop":
            return None
        if self.how == "add":
            payload[self.field] = payload.get(self.field, 0) + self.by
        return payload


class BatchedChange(Change):
    def transform_many(self, items: list[Item]) -> list[Any]:
        if self.fails == "error":
            raise RuntimeError("model not loaded")
        if self.fails == "timeout":
            raise pipeline.HookTimeout("gave up")
        return [self._change(item.payload) for item in items]  # each item's payload is its own


FIELDS = ("a", "b", "c")


def _condition(field: str, below: int) -> Any:
    def condition(context: dict[str, Any]) -> bool:
        if below < 0:
            return bool(1 / 0)  # a condition that raises
        return bool(context["payload"].get(field, 0) < below)

    return condition


@st.composite
def steps(draw: Any) -> list[Step]:
    result = []
    for position in range(1, draw(st.integers(1, 6)) + 1):
        is_batched = draw(st.booleans())
        fails = draw(st.sampled_from(["", "", "", "", "error", "timeout"]))
        boom = None if is_batched else draw(st.none() | st.integers(0, 2))
        field = draw(st.sampled_from(FIELDS))
        hook: Any
        if draw(st.booleans()):
            action = draw(st.sampled_from(["drop", "hold"]))
            hook = (BatchedRule if is_batched else Rule)(field, draw(st.integers(-2, 6)), action, boom, fails)
        else:
            how = draw(st.sampled_from(["add", "add", "noop", "same"]))
            hook = (BatchedChange if is_batched else Change)(field, draw(st.integers(-3, 3)), how, boom, fails)
        condition = None
        if draw(st.integers(0, 2)) == 0:
            condition = _condition(draw(st.sampled_from(FIELDS)), draw(st.integers(-1, 5)))
        result.append(
            Step(
                hook=hook,
                name=f"{hook.kind}_{position}",
                label=draw(st.sampled_from(["", f"step {position}"])),
                config_id=position,
                position=position,
                mode=draw(st.sampled_from([pipeline.ENFORCE, pipeline.ENFORCE, pipeline.OBSERVE])),
                on_error=draw(
                    st.sampled_from([pipeline.ON_ERROR_REJECT, pipeline.ON_ERROR_SKIP, pipeline.ON_ERROR_HOLD])
                ),
                condition=condition,
            )
        )
    return result


payloads = st.fixed_dictionaries(
    {},
    optional={
        "a": st.integers(-2, 6),
        "b": st.integers(-2, 6),
        "c": st.integers(-2, 6),
        "boom": st.integers(0, 2),
        "text": st.text(max_size=5),
    },
)


def _comparable(result: pipeline.Result) -> tuple[Any, ...]:
    trail = tuple(replace(entry, duration_ms=0.0) for entry in result.trail)
    return (
        result.verdict,
        dict(result.payload),
        result.transformed,
        result.reason,
        result.code,
        result.decided_by,
        trail,
        result.verbose,
    )


@settings(max_examples=300, deadline=None)
@given(steps(), st.lists(payloads, max_size=8), st.booleans())
def test_run_many_gives_each_item_what_run_gives_it(step_list: list[Step], items: list[dict], verbose: bool) -> None:
    runner = Pipeline(step_list)
    batch = [Item(payload=payload, id=str(index)) for index, payload in enumerate(items)]

    together = runner.run_many(batch, verbose=verbose)
    alone = [runner.run(item, verbose=verbose) for item in batch]

    assert [_comparable(result) for result in together] == [_comparable(result) for result in alone]
    assert [dict(item.payload) for item in batch] == items  # the callers' payloads are left as they were


# --- asynchronous hooks: a run that waits and is resumed equals one given the answer at once ---------


class Asks:
    """An asynchronous filter: ``pending()`` while the service has not answered; ``answered``
    gives the answer the service will give for an item (by ``payload[field]``): keep, drop, hold,
    or no answer in time (``HookTimeout``, one item at a time only)."""

    kind = "filter"
    answers = ("keep", "drop", "hold", "timeout")

    def __init__(self, field: str, answered: bool = False) -> None:
        self.field, self.answered = field, answered

    def answer(self, item: Item) -> pipeline.Decision | BaseException:
        action = self.answers[item.payload.get(self.field, 0) % len(self.answers)]
        if action == "timeout":
            return pipeline.HookTimeout("no answer in time")
        return {
            "keep": pipeline.keep(),
            "drop": pipeline.drop(f"{self.field} refused", "moderation", self.field),
            "hold": pipeline.hold(f"{self.field} doubtful", "moderation"),
        }[action]

    def filter(self, item: Item) -> pipeline.Decision:
        if not self.answered:
            return pipeline.pending(f"asked about {self.field}")
        answer = self.answer(item)
        if isinstance(answer, BaseException):
            raise answer
        return answer


class BatchedAsks(Asks):
    answers = ("keep", "drop", "hold")  # a batched call fails as a whole, never one item of it

    def filter_many(self, items: list[Item]) -> list[pipeline.Decision]:
        return [self.filter(item) for item in items]


@st.composite
def steps_with_async(draw: Any) -> list[Step]:
    result = draw(steps())
    for _ in range(draw(st.integers(1, 2))):
        position = len(result) + 1
        hook = draw(st.sampled_from([Asks, BatchedAsks]))(draw(st.sampled_from(FIELDS)))
        step = Step(
            hook=hook,
            name=f"asks_{position}",
            config_id=position,
            position=position,
            mode=draw(st.sampled_from([pipeline.ENFORCE, pipeline.ENFORCE, pipeline.OBSERVE])),
            on_error=draw(st.sampled_from([pipeline.ON_ERROR_REJECT, pipeline.ON_ERROR_SKIP, pipeline.ON_ERROR_HOLD])),
            condition=_condition(draw(st.sampled_from(FIELDS)), draw(st.integers(0, 5)))
            if draw(st.booleans())
            else None,
        )
        result.insert(draw(st.integers(0, len(result))), step)
    return result


def _answering(step: Step) -> Step:
    """``step`` with its asynchronous hook answering at once (an observing one never waits: the same)."""
    if isinstance(step.hook, Asks) and step.mode == pipeline.ENFORCE:
        return replace(step, hook=type(step.hook)(step.hook.field, answered=True))
    return step


@settings(max_examples=300, deadline=None)
@given(steps_with_async(), st.lists(payloads, max_size=6))
def test_a_run_that_waits_and_is_resumed_with_an_answer_equals_one_given_it_at_once(
    step_list: list[Step], items: list[dict]
) -> None:
    waits = Pipeline(step_list)
    at_once = Pipeline([_answering(step) for step in step_list])
    batch = [Item(payload=payload, id=str(index)) for index, payload in enumerate(items)]

    resumed = []
    for item, result in zip(batch, waits.run_many(batch), strict=True):
        while result.verdict == pipeline.WAITING:
            at = result.waiting_at
            assert at is not None and result.trail[at].outcome == pipeline.WAITING
            hook = waits.judging[at].hook
            answer = hook.answer(replace(item, payload=result.payload))
            result = waits.resume(item, at, result.payload, result.trail[:at], answer)
        resumed.append(result)

    assert [_comparable(result) for result in resumed] == [_comparable(at_once.run(item)) for item in batch]
    assert [dict(item.payload) for item in batch] == items


@settings(max_examples=100, deadline=None)
@given(steps_with_async(), payloads)
def test_a_run_stops_at_the_first_enforcing_asynchronous_hook_and_an_observing_one_would_wait(
    step_list: list[Step], payload: dict
) -> None:
    result = Pipeline(step_list).run(Item(payload=payload))

    waiting = [entry for entry in result.trail if entry.outcome == pipeline.WAITING]
    if result.verdict == pipeline.WAITING:
        assert waiting == [result.trail[-1]] and result.trail[-1].stopped
        assert result.trail[-1].hook.startswith("asks_")
    else:
        assert not waiting
    for entry in result.trail:
        if entry.hook.startswith("asks_") and entry.outcome == pipeline.OBSERVED:
            assert entry.would == "wait" and entry.message.startswith("would wait")
