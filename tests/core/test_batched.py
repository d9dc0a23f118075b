"""Batched hooks: called once per batch with the items still alive at their position."""

from __future__ import annotations

import inspect
import re
import time
from pathlib import Path
from typing import Any

import pytest

from stash import hooks
from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step
from stash.core.testing import register_temporarily, run_hook

# --- the example in docs/hooks.md ("A batched hook") -------------------------------------------


def capital_shares(texts):
    """The share of capitals among each text's letters: one call for the whole batch, as a
    model's ``predict`` would be."""
    shares = []
    for text in texts:
        letters = [c for c in text if c.isalpha()]
        shares.append(sum(c.isupper() for c in letters) / len(letters) if letters else 0.0)
    return shares


class ShoutingModel(hooks.Filter):
    """Hold text that a model scores as shouting, a batch at a time."""

    params_schema = {
        "type": "object",
        "properties": {"threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.7}},
        "additionalProperties": False,
    }

    def filter_many(self, items):
        texts = [str(item.payload.get("text", "")) for item in items]
        threshold = self.params.get("threshold", 0.7)
        return [
            self.hold(f"shouting (score {score:.2f})", "shouting", "text") if score > threshold else self.keep()
            for score in capital_shares(texts)
        ]


# --------------------------------------------------------------------------------------------


def test_the_docs_show_the_tested_example() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "hooks.md").read_text()
    section = doc[doc.index("## A batched hook") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    tested = (
        "from stash import hooks\n\n\n" + inspect.getsource(capital_shares) + "\n\n" + inspect.getsource(ShoutingModel)
    )
    assert block.group(1) == tested


def test_the_example_holds_shouting_one_item_or_many() -> None:
    assert pipeline.batched(ShoutingModel())
    with register_temporarily("shouting_model", ShoutingModel):
        result = run_hook("shouting_model", {"threshold": 0.5}, {"text": "READ THIS NOW"})
        assert (result.verdict, result.reason, result.code) == ("held", "shouting (score 1.00)", "shouting")
        assert run_hook("shouting_model", {}, {"text": "A calm line."}).verdict == "accepted"
    runner = Pipeline([Step(hook=ShoutingModel({"threshold": 0.5}), name="shouting_model", config_id=1, position=1)])
    results = runner.run_many([Item(payload={"text": t}) for t in ["calm", "LOUD!", "", "Mixed Case"]])
    assert [r.verdict for r in results] == ["accepted", "held", "accepted", "accepted"]
    assert results[1].trail[0].field == "text"


class Counting(hooks.Filter):
    """Drops items whose ``n`` is at least ``at``; notes each call's items."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(params)
        self.calls: list[list[str | None]] = []

    def filter_many(self, items: list[Item]) -> list[pipeline.Decision]:
        self.calls.append([item.id for item in items])
        at = self.params.get("at", 100)
        return [self.drop("too big", "big") if item.payload.get("n", 0) >= at else self.keep() for item in items]


class AddOne(hooks.Transform):
    """Adds one to ``n``, a batch at a time."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(params)
        self.calls = 0

    def transform_many(self, items: list[Item]) -> list[Any]:
        self.calls += 1
        for item in items:
            item.payload["n"] = item.payload.get("n", 0) + 1  # each item's payload is its own
        return [item.payload for item in items]


class Failing(hooks.Filter):
    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(params)
        self.calls = 0

    def filter_many(self, items: list[Item]) -> list[pipeline.Decision]:
        self.calls += 1
        raise RuntimeError("model not loaded")


class Slow(hooks.Filter):
    def filter_many(self, items: list[Item]) -> list[pipeline.Decision]:
        time.sleep(self.params.get("seconds", 5))
        return [self.keep() for _ in items]


class PerItem(hooks.Filter):
    def filter(self, item: Item) -> pipeline.Decision:
        return self.drop("negative", "negative") if item.payload.get("n", 0) < 0 else self.keep()


def _items(*ns: int) -> list[Item]:
    return [Item(payload={"n": n}, id=f"i{index}") for index, n in enumerate(ns)]


def test_batched_hooks_are_told_apart() -> None:
    assert pipeline.batched(Counting()) and pipeline.batched(AddOne())
    assert not pipeline.batched(PerItem())
    assert PerItem().filter_many(_items(-1, 1)) == [pipeline.drop("negative", "negative"), pipeline.keep()]


def test_a_batched_hook_is_called_once_with_the_items_alive_at_its_position() -> None:
    counting, add_one = Counting({"at": 3}), AddOne()
    runner = Pipeline(
        [
            Step(hook=PerItem(), name="per_item", config_id=1, position=1),
            Step(hook=add_one, name="add_one", config_id=2, position=2),
            # Skipped where n (after add_one) is 5 or more.
            Step(hook=counting, name="counting", config_id=3, position=3, condition=lambda c: c["payload"]["n"] < 5),
            Step(hook=Counting({"at": 1}), name="last", config_id=4, position=4, mode=pipeline.OBSERVE),
        ]
    )
    results = runner.run_many(_items(-1, 0, 2, 9, 1))

    assert add_one.calls == 1
    assert counting.calls == [["i1", "i2", "i4"]]  # i0 was dropped before, i3 skipped by the condition
    assert [r.verdict for r in results] == ["rejected", "accepted", "rejected", "accepted", "accepted"]
    assert [dict(r.payload) for r in results] == [{"n": -1}, {"n": 1}, {"n": 3}, {"n": 10}, {"n": 2}]
    assert [e.outcome for e in results[3].trail] == ["kept", "transformed", "skipped", "observed"]
    assert (results[2].reason, results[2].decided_by) == ("too big", 3)
    alone = [runner.run(item) for item in _items(-1, 0, 2, 9, 1)]
    assert [(r.verdict, r.payload, r.reason) for r in results] == [(r.verdict, r.payload, r.reason) for r in alone]


@pytest.mark.parametrize(
    ("on_error", "verdict"),
    [(pipeline.ON_ERROR_REJECT, "rejected"), (pipeline.ON_ERROR_HOLD, "held"), (pipeline.ON_ERROR_SKIP, "accepted")],
)
def test_a_batched_call_that_raises_fails_each_of_its_items(on_error: str, verdict: str) -> None:
    failing = Failing()
    runner = Pipeline(
        [
            Step(hook=PerItem(), name="per_item", config_id=1, position=1),
            Step(hook=failing, name="model", label="Model", config_id=2, position=2, on_error=on_error),
            Step(hook=Counting({"at": 5}), name="counting", config_id=3, position=3),
        ]
    )
    results = runner.run_many(_items(1, -1, 7))

    assert failing.calls == 1
    assert results[1].verdict == "rejected" and len(results[1].trail) == 1  # dropped before the model
    for result in (results[0], results[2]):
        entry = result.trail[1]
        assert (entry.outcome, entry.code) == ("error", "hook_error")
        assert entry.message.endswith("RuntimeError: model not loaded")
    if on_error == pipeline.ON_ERROR_SKIP:
        assert [r.verdict for r in results] == ["accepted", "rejected", "rejected"]  # the next hook still ran
    else:
        assert [r.verdict for r in results] == [verdict, "rejected", verdict]
        assert results[0].reason == "Model: RuntimeError: model not loaded"


def test_a_batched_hook_in_observe_mode_changes_nothing() -> None:
    runner = Pipeline(
        [
            Step(hook=Counting({"at": 1}), name="counting", config_id=1, position=1, mode=pipeline.OBSERVE),
            Step(hook=Failing(), name="failing", config_id=2, position=2, mode=pipeline.OBSERVE),
        ]
    )
    results = runner.run_many(_items(0, 5))
    assert [r.verdict for r in results] == ["accepted", "accepted"]
    assert [(e.outcome, e.would) for e in results[1].trail] == [("observed", "drop"), ("error", "")]
    assert results[1].trail[0].message == "would drop: too big"


def test_a_batched_call_past_its_time_times_out_each_of_its_items() -> None:
    # The call has the step's timeout for each item in it: 2 x 50 ms here.
    runner = Pipeline(
        [
            Step(hook=Slow({"seconds": 5}), name="slow", config_id=1, position=1, timeout=0.05, on_error="hold"),
            Step(hook=Counting(), name="counting", config_id=2, position=2),
        ]
    )
    started = time.perf_counter()
    results = runner.run_many(_items(1, 2))
    assert time.perf_counter() - started < 2
    for result in results:
        assert (result.verdict, result.reason) == ("held", "slow: timed out after 50 ms")
        assert [(e.outcome, e.code) for e in result.trail] == [("timeout", "timeout")]
    # Each item's entry shows its share of the call's time.
    assert all(40 <= r.trail[0].duration_ms < 1000 for r in results)


def test_a_batched_call_shares_its_time_among_its_items() -> None:
    runner = Pipeline([Step(hook=Slow({"seconds": 0.1}), name="slow", config_id=1, position=1, timeout=1)])
    results = runner.run_many(_items(1, 2, 3, 4))
    durations = [r.trail[0].duration_ms for r in results]
    assert all(20 <= d < 60 for d in durations), durations
    assert 100 <= sum(durations) < 240


def test_a_batched_hook_that_returns_the_wrong_number_of_results_is_an_error() -> None:
    class Short(hooks.Filter):
        def filter_many(self, items: list[Item]) -> list[pipeline.Decision]:
            return [self.keep()]

    results = Pipeline([Step(hook=Short(), name="short", config_id=1, position=1)]).run_many(_items(1, 2))
    assert [r.verdict for r in results] == ["rejected", "rejected"]
    assert results[0].reason == "short: returned 1 results, not one result for each of 2 items"
    assert results[0].trail[0].code == "bad_return"


def test_run_gives_a_batched_hook_a_batch_of_one() -> None:
    counting = Counting({"at": 3})
    runner = Pipeline([Step(hook=counting, name="counting", config_id=1, position=1)])
    assert runner.run(Item(payload={"n": 4}, id="x")).verdict == "rejected"
    assert counting.calls == [["x"]]
    assert runner.run_many([]) == []
