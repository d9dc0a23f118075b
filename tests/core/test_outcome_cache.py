"""The runner's outcome cache, with no Django: ``Pipeline(cache=..., version=...)`` and a step's
``cache_seconds``; ``recall`` / ``remember`` work a batch of items at a time (one get_many, one set_many)."""

from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step


class DictCache:
    """A cache with the two methods the runner uses, counting its calls."""

    def __init__(self):
        self.data = {}
        self.gets = []
        self.sets = []

    def get_many(self, keys):
        self.gets.append(list(keys))
        return {key: self.data[key] for key in keys if key in self.data}

    def set_many(self, data, timeout):
        self.sets.append((dict(data), timeout))
        self.data.update(data)


class Down:
    def get_many(self, keys):
        raise ConnectionError("cache down")

    def set_many(self, data, timeout):
        raise ConnectionError("cache down")


class Counting:
    kind = "filter"

    def __init__(self, fails=False):
        self.calls = 0
        self.fails = fails

    def filter(self, item):
        self.calls += 1
        if self.fails:
            raise ValueError("no model")
        return pipeline.drop("bad", "bad", "text") if "bad" in item.payload.get("text", "") else pipeline.keep()


class Upper:
    kind = "transform"

    def transform(self, item):
        return {**item.payload, "text": item.payload["text"].upper(), "seen": True}


def step(hook, **fields):
    return Step(hook=hook, name="counting", config_id=7, cache_seconds=60, **fields)


def test_a_batch_is_looked_up_in_one_call_and_kept_in_one_call():
    cache, hook = DictCache(), Counting()
    runner = Pipeline([step(hook)], cache=cache, version=3)
    items = [Item(payload={"text": "bad one"}), Item(payload={"text": "fine"})]

    assert runner.recall(runner.steps[0], items) == [pipeline.MISSING, pipeline.MISSING]
    runner.remember(runner.steps[0], items, [pipeline.drop("bad", "bad", "text"), pipeline.keep()])

    assert runner.recall(runner.steps[0], items) == [pipeline.drop("bad", "bad", "text"), pipeline.keep()]
    assert len(cache.gets) == 2 and len(cache.gets[0]) == 2
    assert len(cache.sets) == 1 and cache.sets[0][1] == 60


def test_run_reuses_the_outcome_and_marks_the_trail():
    cache, hook = DictCache(), Counting()
    runner = Pipeline([step(hook)], cache=cache, version=3)

    first = runner.run(Item(payload={"text": "bad"}))
    second = runner.run(Item(payload={"text": "bad"}, id="other"))

    assert hook.calls == 1
    assert (first.verdict, second.verdict) == ("rejected", "rejected")
    assert not first.trail[0].cached and second.trail[0].cached
    assert second.trail[0].as_dict()["cached"] is True and "cached" not in first.trail[0].as_dict()


def test_another_version_or_config_or_field_value_misses():
    cache, hook = DictCache(), Counting()
    Pipeline([step(hook)], cache=cache, version=3).run(Item(payload={"text": "x"}))

    Pipeline([step(hook)], cache=cache, version=4).run(Item(payload={"text": "x"}))
    Pipeline([Step(hook=hook, name="counting", config_id=8, cache_seconds=60)], cache=cache, version=3).run(
        Item(payload={"text": "x"})
    )
    Pipeline([step(hook)], cache=cache, version=3).run(Item(payload={"text": "y"}))

    assert hook.calls == 4


def test_only_the_fields_read_key_the_outcome():
    cache, hook = DictCache(), Counting()
    runner = Pipeline([step(hook, cache_fields=("text",))], cache=cache, version=1)

    runner.run(Item(payload={"text": "x", "other": 1}))
    runner.run(Item(payload={"text": "x", "other": 2}))
    runner.run(Item(payload={"other": 2}))  # no text: another input
    runner.run(Item(payload={"text": None, "other": 2}))  # null is not missing

    assert hook.calls == 3


def test_a_reused_transform_changes_each_payload_as_the_hook_did():
    cache = DictCache()
    runner = Pipeline([step(Upper(), cache_fields=("text",))], cache=cache, version=1)

    runner.run(Item(payload={"text": "hi", "n": 1}))
    again = runner.run(Item(payload={"text": "hi", "n": 2, "seen": False}))

    assert again.trail[0].cached
    assert again.payload == {"text": "HI", "n": 2, "seen": True}


def test_errors_are_not_kept_and_a_cache_down_just_runs_the_hook():
    cache, failing = DictCache(), Counting(fails=True)
    runner = Pipeline([step(failing, on_error=pipeline.ON_ERROR_SKIP)], cache=cache, version=1)
    runner.run(Item(payload={"text": "x"}))
    runner.run(Item(payload={"text": "x"}))
    assert failing.calls == 2 and cache.data == {}

    hook = Counting()
    down = Pipeline([step(hook)], cache=Down(), version=1)
    assert [down.run(Item(payload={"text": "bad"})).verdict for _ in range(2)] == ["rejected", "rejected"]
    assert hook.calls == 2


def test_runs_that_only_look_and_steps_without_cache_seconds_never_use_it():
    cache, hook = DictCache(), Counting()
    runner = Pipeline([step(hook)], cache=cache, version=1)

    runner.looking().run(Item(payload={"text": "x"}))
    Pipeline([Step(hook=hook, name="counting", config_id=7)], cache=cache, version=1).run(Item(payload={"text": "x"}))

    assert cache.gets == [] and cache.sets == [] and hook.calls == 2


class CountingBatch(Counting):
    """``Counting`` judging a batch in one call: records each call's items."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def filter_many(self, items):
        self.batches.append([item.payload["text"] for item in items])
        return [Counting.filter(self, item) for item in items]


def test_a_batched_hook_is_asked_only_about_the_items_the_cache_missed():
    cache, hook = DictCache(), CountingBatch()
    runner = Pipeline([step(hook)], cache=cache, version=3)
    first = runner.run_many([Item(payload={"text": "bad one"}), Item(payload={"text": "fine"})])
    again = runner.run_many(
        [Item(payload={"text": "fine"}), Item(payload={"text": "new"}), Item(payload={"text": "bad one"})]
    )

    assert hook.batches == [["bad one", "fine"], ["new"]]
    assert [r.verdict for r in first] == ["rejected", "accepted"]
    assert [r.verdict for r in again] == ["accepted", "accepted", "rejected"]
    assert [r.trail[0].cached for r in again] == [True, False, True]
    assert again[2].reason == first[0].reason
