"""The pure pipeline runner: plain hooks and payloads in, a verdict and a trail out. No database."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step

REPO = Path(__file__).resolve().parents[2]


# --- small hooks ------------------------------------------------------------------------------


class Keep:
    kind = "filter"

    def __init__(self, calls=None, name="keep"):
        self.calls = calls if calls is not None else []
        self.name = name

    def filter(self, item):
        self.calls.append(self.name)
        return pipeline.keep()


class Drop:
    kind = "filter"

    def __init__(self, reason="bad", code="nope", calls=None, name="drop"):
        self.reason, self.code = reason, code
        self.calls = calls if calls is not None else []
        self.name = name

    def filter(self, item):
        self.calls.append(self.name)
        return pipeline.drop(self.reason, self.code)


class Hold:
    kind = "filter"

    def __init__(self, reason="needs a look", code="review"):
        self.reason, self.code = reason, code

    def filter(self, item):
        return pipeline.hold(self.reason, self.code)


class Raises:
    kind = "filter"

    def filter(self, item):
        raise ValueError("boom")


class ReturnsString:
    kind = "filter"

    def filter(self, item):
        return "keep"


class Sleeps:
    kind = "filter"

    def __init__(self, seconds):
        self.seconds = seconds

    def filter(self, item):
        time.sleep(self.seconds)
        return pipeline.keep()


class SleepsSwallowingExceptions:
    """A hook that tries to swallow every ``Exception`` around its slow work."""

    kind = "filter"

    def __init__(self):
        self.swallowed = False

    def filter(self, item):
        try:
            time.sleep(5)
        except Exception:
            self.swallowed = True
        return pipeline.keep()


class SetKey:
    """A transform that sets ``key`` by mutating its argument in place and returning it."""

    kind = "transform"

    def __init__(self, key, value, calls=None):
        self.key, self.value = key, value
        self.calls = calls if calls is not None else []
        self.seen = []

    def transform(self, item):
        self.calls.append(f"set {self.key}")
        self.seen.append(dict(item.payload))
        item.payload[self.key] = self.value
        return item.payload


class Upper:
    """A transform that upper-cases ``text`` and returns a fresh dict."""

    kind = "transform"

    def __init__(self):
        self.seen = []

    def transform(self, item):
        self.seen.append(dict(item.payload))
        return {**item.payload, "text": item.payload["text"].upper()}


class ReturnsNone:
    kind = "transform"

    def transform(self, item):
        item.payload["ignored"] = True  # changes its own copy but says "unchanged"
        return None


class ReturnsSame:
    kind = "transform"

    def transform(self, item):
        return dict(item.payload)


class ReturnsList:
    kind = "transform"

    def transform(self, item):
        return ["not", "a", "payload"]


class Recorder:
    """A sink that records the events it was told about."""

    kind = "sink"

    def __init__(self):
        self.events = []

    def on_accept(self, item, result):
        self.events.append(("accept", item.payload, result.verdict))

    def on_reject(self, item, result):
        self.events.append(("reject", item.payload, result.verdict))


class BrokenSink:
    kind = "sink"

    def on_accept(self, item, result):
        raise RuntimeError("mail server down")


class OnlyOnHold:
    kind = "sink"

    def __init__(self):
        self.called = False

    def on_hold(self, item, result):
        self.called = True


def step(hook, name=None, **kwargs):
    return Step(hook=hook, name=name or type(hook).__name__.lower(), **kwargs)


def run(*steps, payload=None, **kwargs):
    return Pipeline(steps).run(Item(payload=payload if payload is not None else {"text": "hi"}), **kwargs)


# --- order and verdicts -----------------------------------------------------------------------


def test_empty_pipeline_accepts_the_payload_as_is():
    payload = {"text": "hi"}
    result = Pipeline([]).run(Item(payload=payload))

    assert result.verdict == pipeline.ACCEPTED
    assert result.payload == {"text": "hi"}
    assert result.transformed is False
    assert result.trail == ()
    assert result.reason == "" and result.code == "" and result.decided_by is None


def test_steps_run_in_the_order_given():
    calls = []
    result = run(step(Keep(calls, "first"), "first"), step(SetKey("a", 1, calls)), step(Keep(calls, "third"), "third"))

    assert calls == ["first", "set a", "third"]
    assert result.verdict == pipeline.ACCEPTED
    assert [e.hook for e in result.trail] == ["first", "setkey", "third"]
    assert [e.outcome for e in result.trail] == ["kept", "transformed", "kept"]


def test_first_drop_ends_the_run_and_rejects():
    calls = []
    result = run(
        step(Keep(calls, "a"), "a", config_id=1, position=0),
        step(Drop("has spam", "spam", calls, "b"), "b", config_id=2, position=1),
        step(Drop("second reason", "other", calls, "c"), "c", config_id=3, position=2),
        step(Keep(calls, "d"), "d", config_id=4, position=3),
    )

    assert calls == ["a", "b"]
    assert result.verdict == pipeline.REJECTED
    assert result.reason == "has spam"
    assert result.code == "spam"
    assert result.decided_by == 2
    assert [(e.hook, e.outcome) for e in result.trail] == [("a", "kept"), ("b", "dropped")]
    assert result.trail[-1].message == "has spam"
    assert result.trail[-1].position == 1


def test_hold_ends_the_run_as_held():
    calls = []
    result = run(step(Hold("looks odd", "odd"), config_id=7), step(Keep(calls)))

    assert calls == []
    assert result.verdict == pipeline.HELD
    assert (result.reason, result.code, result.decided_by) == ("looks odd", "odd", 7)
    assert result.trail[0].outcome == "held"


def test_drop_uses_default_code():
    assert pipeline.drop("why") == pipeline.Decision("drop", "why", "dropped")
    assert pipeline.hold("why") == pipeline.Decision("hold", "why", "held")
    assert pipeline.keep().action == "keep"


# --- transforms -------------------------------------------------------------------------------


def test_transforms_chain_and_do_not_mutate_the_input_payload():
    first, second = SetKey("a", 1), SetKey("b", 2)
    original = {"text": "hi", "nested": {"x": 1}}
    item = Item(payload=original)

    result = Pipeline([step(first, "first"), step(second, "second")]).run(item)

    assert second.seen == [{"text": "hi", "nested": {"x": 1}, "a": 1}]  # sees the first's output
    assert result.payload == {"text": "hi", "nested": {"x": 1}, "a": 1, "b": 2}
    assert result.transformed is True
    assert result.verdict == pipeline.ACCEPTED
    assert item.payload is original
    assert original == {"text": "hi", "nested": {"x": 1}}
    assert [e.message for e in result.trail] == ["changed a", "changed b"]
    assert [e.code for e in result.trail] == ["transformed", "transformed"]


def test_nested_in_place_change_by_a_transform_stays_in_its_copy():
    class Nest:
        kind = "transform"

        def transform(self, item):
            item.payload["nested"]["x"] = 99
            return item.payload

    original = {"nested": {"x": 1}}
    result = run(step(Nest()), payload=original)

    assert result.payload == {"nested": {"x": 99}}
    assert original == {"nested": {"x": 1}}
    assert result.trail[0].message == "changed nested"


def test_filter_after_a_transform_sees_the_transformed_payload():
    class SeesText:
        kind = "filter"

        def filter(self, item):
            return pipeline.drop("shouting") if item.payload["text"].isupper() else pipeline.keep()

    result = run(step(Upper()), step(SeesText()), payload={"text": "quiet"})

    assert result.verdict == pipeline.REJECTED
    assert result.reason == "shouting"
    # The rejected result still carries the payload as it was when judged.
    assert result.payload == {"text": "QUIET"}


def test_transform_returning_none_keeps_the_payload():
    original = {"text": "hi"}
    result = run(step(ReturnsNone()), payload=original)

    assert result.trail[0].outcome == "kept"
    assert result.trail[0].code == "unchanged"
    assert result.payload == {"text": "hi"}
    assert result.transformed is False
    assert original == {"text": "hi"}


def test_transform_returning_an_equal_payload_is_kept_unchanged():
    result = run(step(ReturnsSame()))

    assert (result.trail[0].outcome, result.trail[0].code) == ("kept", "unchanged")
    assert result.transformed is False


def test_transform_returning_a_non_mapping_is_a_bad_return():
    result = run(step(ReturnsList(), label="Listy"))

    assert result.verdict == pipeline.REJECTED
    assert result.trail[0].outcome == "error"
    assert result.code == "bad_return"
    assert result.reason == "Listy: returned list, not a payload object"
    assert result.payload == {"text": "hi"}


def test_transform_message_lists_added_and_removed_keys():
    class Reshape:
        kind = "transform"

        def transform(self, item):
            return {"body": item.payload["text"], "z": 1}

    result = run(step(Reshape()))

    assert result.trail[0].message == "changed body, text, z"
    assert result.payload == {"body": "hi", "z": 1}


# --- conditions -------------------------------------------------------------------------------


def test_condition_false_skips_the_step_without_calling_it():
    calls = []
    seen = []

    def only_api(context):
        seen.append(context)
        return context["meta"]["source"] == "api"

    item = Item(payload={"text": "hi"}, source="form", stash="inbox", revision=3, submitted_by=None)
    result = Pipeline([step(Drop(calls=calls), condition=only_api)]).run(item)

    assert calls == []
    assert result.verdict == pipeline.ACCEPTED
    assert (result.trail[0].outcome, result.trail[0].code) == ("skipped", "condition")
    assert result.trail[0].message == "condition not met"
    assert seen == [
        {"payload": {"text": "hi"}, "meta": {"stash": "inbox", "source": "form", "revision": 3, "submitted_by": ""}}
    ]


def test_condition_true_runs_the_step():
    calls = []
    result = run(step(Drop(calls=calls), condition=lambda ctx: ctx["payload"]["text"] == "hi"))

    assert calls == ["drop"]
    assert result.verdict == pipeline.REJECTED


def test_condition_sees_the_transformed_payload():
    calls = []
    result = run(step(Upper()), step(Drop(calls=calls), condition=lambda ctx: ctx["payload"]["text"] == "HI"))

    assert calls == ["drop"]
    assert result.verdict == pipeline.REJECTED


def _broken_condition(context):
    raise KeyError("data")


@pytest.mark.parametrize(
    ("on_error", "verdict"), [("reject", pipeline.REJECTED), ("hold", pipeline.HELD), ("skip", pipeline.ACCEPTED)]
)
def test_condition_that_raises_is_handled_by_on_error(on_error, verdict):
    calls = []
    result = run(step(Keep(calls), "k", label="Guarded", on_error=on_error, condition=_broken_condition))

    assert calls == []
    assert result.verdict == verdict
    assert result.trail[0].outcome == "error"
    assert result.trail[0].code == "hook_error"
    assert "KeyError: 'data'" in result.trail[0].message


# --- observe mode -----------------------------------------------------------------------------


def test_observing_filter_records_what_it_would_drop_and_accepts():
    calls = []
    result = run(step(Drop("has spam", "spam"), mode=pipeline.OBSERVE, config_id=5), step(Keep(calls)))

    assert result.verdict == pipeline.ACCEPTED
    assert calls == ["keep"]
    entry = result.trail[0]
    assert entry.outcome == "observed"
    assert entry.message.startswith("would drop")
    assert entry.message == "would drop: has spam"
    assert entry.code == "spam"
    assert entry.would == "drop" and entry.as_dict()["would"] == "drop"
    assert result.decided_by is None and result.reason == ""


def test_observing_hold_records_would_hold():
    result = run(step(Hold("check me"), mode=pipeline.OBSERVE))

    assert result.verdict == pipeline.ACCEPTED
    assert (result.trail[0].outcome, result.trail[0].message) == ("observed", "would hold: check me")
    assert result.trail[0].would == "hold"


def test_observing_transform_does_not_change_the_payload():
    upper = Upper()
    calls = []
    result = run(step(upper, mode=pipeline.OBSERVE), step(SetKey("a", 1, calls)), payload={"text": "hi"})

    assert result.trail[0].outcome == "observed"
    assert result.trail[0].message == "would have changed text"
    assert result.trail[0].would == "transform"
    assert result.payload == {"text": "hi", "a": 1}  # the next transform worked on the untouched text


def test_observing_hook_that_raises_is_recorded_and_does_not_decide():
    result = run(step(Raises(), mode=pipeline.OBSERVE, on_error="reject"))

    assert result.verdict == pipeline.ACCEPTED
    assert result.trail[0].outcome == "error"
    assert result.trail[0].message == "ValueError: boom"


# --- errors -----------------------------------------------------------------------------------


def test_raising_hook_with_on_error_reject_rejects_naming_the_step():
    calls = []
    result = run(step(Raises(), "raises", label="Spam check", config_id=9), step(Keep(calls)))

    assert result.verdict == pipeline.REJECTED
    assert result.reason == "Spam check: ValueError: boom"
    assert result.code == "hook_error"
    assert result.decided_by == 9
    assert result.trail[0].outcome == "error"
    assert calls == []


def test_step_title_falls_back_to_the_hook_name():
    result = run(step(Raises(), "raises"))

    assert result.reason == "raises: ValueError: boom"


def test_raising_hook_with_on_error_skip_continues():
    calls = []
    result = run(step(Raises(), on_error=pipeline.ON_ERROR_SKIP), step(Keep(calls)))

    assert calls == ["keep"]
    assert result.verdict == pipeline.ACCEPTED
    assert [e.outcome for e in result.trail] == ["error", "kept"]
    assert result.trail[0].message == "ValueError: boom"


def test_raising_hook_with_on_error_hold_holds():
    result = run(step(Raises(), label="Flaky", on_error=pipeline.ON_ERROR_HOLD))

    assert result.verdict == pipeline.HELD
    assert result.reason == "Flaky: ValueError: boom"
    assert result.trail[0].outcome == "error"


def test_raising_transform_leaves_payload_alone():
    class Half:
        kind = "transform"

        def transform(self, item):
            item.payload["text"] = "half-done"
            raise RuntimeError("crashed midway")

    original = {"text": "hi"}
    result = run(step(Half(), on_error="skip"), payload=original)

    assert result.verdict == pipeline.ACCEPTED
    assert result.payload == {"text": "hi"}
    assert original == {"text": "hi"}
    assert result.trail[0].message == "RuntimeError: crashed midway"


def test_filter_returning_a_non_decision_is_a_bad_return():
    result = run(step(ReturnsString(), label="Sloppy"))

    assert result.verdict == pipeline.REJECTED
    assert result.trail[0].outcome == "error"
    assert result.trail[0].code == "bad_return"
    assert result.reason == "Sloppy: returned str, not keep(), drop() or hold()"


def test_bad_return_with_skip_continues():
    calls = []
    result = run(step(ReturnsString(), on_error="skip"), step(Keep(calls)))

    assert result.verdict == pipeline.ACCEPTED
    assert calls == ["keep"]
    assert result.trail[0].code == "bad_return"


# --- timeouts ---------------------------------------------------------------------------------


def test_slow_hook_is_interrupted_and_recorded_as_timeout():
    calls = []
    started = time.monotonic()
    result = run(step(Sleeps(5), label="Slow", timeout=0.2, config_id=3), step(Keep(calls)))
    elapsed = time.monotonic() - started

    assert elapsed < 2
    assert result.verdict == pipeline.REJECTED
    assert result.trail[0].outcome == "timeout"
    assert result.code == "timeout"
    assert result.reason == "Slow: timed out after 200 ms"
    assert result.decided_by == 3
    assert calls == []


@pytest.mark.parametrize(("on_error", "verdict", "after"), [("hold", "held", []), ("skip", "accepted", ["keep"])])
def test_a_stopped_step_times_out_at_once_and_its_policy_decides(on_error, verdict, after):
    calls = []
    stuck = Sleeps(60)  # stands for a hook that hung where no alarm reached it
    original = Pipeline(
        [
            step(stuck, label="Stuck", config_id=7, timeout=0.3, on_error=on_error, condition=lambda context: 1 / 0),
            step(Keep(calls), config_id=8),
        ]
    )

    result = original.stopping(7, "stopped with its worker").run(Item(payload={"text": "hi"}))

    assert result.verdict == verdict
    assert [(e.label, e.outcome, e.code) for e in result.trail][0] == ("Stuck", "timeout", "timeout")
    assert result.trail[0].message == (
        "Stuck: stopped with its worker" if on_error == "hold" else "stopped with its worker"
    )
    assert calls == after
    assert original.steps[0].hook is stuck  # the original pipeline is untouched


def test_budget_is_the_sum_of_the_judging_steps_timeouts():
    sink = type("Sink", (), {"kind": "sink"})()
    pipeline_ = Pipeline([step(Keep(), timeout=0.3), step(Keep()), step(Drop(), timeout=2), step(sink, timeout=9)])

    assert pipeline_.budget == pytest.approx(2.3)
    assert Pipeline([]).budget == 0


def test_timeout_with_on_error_skip_moves_on():
    calls = []
    started = time.monotonic()
    result = run(step(Sleeps(5), timeout=0.1, on_error="skip"), step(Keep(calls)))

    assert time.monotonic() - started < 2
    assert result.verdict == pipeline.ACCEPTED
    assert [e.outcome for e in result.trail] == ["timeout", "kept"]
    assert calls == ["keep"]


def test_hook_catching_exception_is_still_interrupted():
    hook = SleepsSwallowingExceptions()
    started = time.monotonic()
    result = run(step(hook, timeout=0.2))

    assert time.monotonic() - started < 2
    assert hook.swallowed is False
    assert result.trail[0].outcome == "timeout"
    assert result.verdict == pipeline.REJECTED
    assert issubclass(pipeline.HookTimeout, BaseException)
    assert not issubclass(pipeline.HookTimeout, Exception)


def test_fast_hook_with_timeout_is_not_a_timeout():
    result = run(step(Keep(), timeout=1.0))

    assert result.trail[0].outcome == "kept"
    assert result.verdict == pipeline.ACCEPTED


def test_no_timer_left_armed_and_previous_handler_restored():
    def previous_handler(signum, frame):  # pragma: no cover - must never fire
        raise AssertionError("the pipeline's timer fired into the caller's handler")

    old = signal.signal(signal.SIGALRM, previous_handler)
    try:
        run(step(Keep(), timeout=0.5), step(Sleeps(5), timeout=0.1, on_error="skip"), step(Keep(), timeout=0.5))
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is previous_handler

        run(step(Raises(), timeout=0.5))
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is previous_handler

        run(step(Keep(), timeout=0.5, condition=lambda ctx: False))
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is previous_handler
        time.sleep(0.6)  # a stray timer would fire here and fail the test
    finally:
        signal.signal(signal.SIGALRM, old)


def test_default_sigalrm_handler_is_restored():
    old = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    try:
        run(step(Keep(), timeout=0.5))
        assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, old)


def test_timeout_outside_the_main_thread_is_recorded_after_the_fact():
    results = []
    thread = threading.Thread(
        target=lambda: results.append(run(step(Sleeps(0.3), label="Slow", timeout=0.1), step(Keep())))
    )
    thread.start()
    thread.join(5)

    assert not thread.is_alive()
    [result] = results
    assert result.verdict == pipeline.REJECTED
    assert [e.outcome for e in result.trail] == ["timeout"]
    assert result.reason == "Slow: timed out after 100 ms"
    assert result.trail[0].duration_ms >= 300


def test_thread_without_timeout_overrun_is_fine():
    results = []
    thread = threading.Thread(target=lambda: results.append(run(step(Keep(), timeout=1.0))))
    thread.start()
    thread.join(5)

    assert results[0].verdict == pipeline.ACCEPTED
    assert results[0].trail[0].outcome == "kept"


# --- verbose mode -----------------------------------------------------------------------------


def test_verbose_runs_every_step_after_a_drop_and_marks_the_one_that_stopped_the_run():
    calls = []
    steps = (
        step(Keep(calls, "first"), "first", config_id=1, position=1),
        step(Drop("spam", "blocked", calls, "spam"), "spam", config_id=2, position=2),
        step(Drop("too long", "size", calls, "size"), "size", config_id=3, position=3),
        step(Keep(calls, "last"), "last", config_id=4, position=4),
    )

    normal, verbose = run(*steps), run(*steps, verbose=True)

    assert calls == ["first", "spam", "first", "spam", "size", "last"]
    assert [e.hook for e in normal.trail] == ["first", "spam"]
    assert [(e.hook, e.outcome, e.stopped, e.after_stop) for e in verbose.trail] == [
        ("first", "kept", False, False),
        ("spam", "dropped", True, False),
        ("size", "dropped", False, True),
        ("last", "kept", False, True),
    ]
    # The verdict is the normal run's: the first drop decides, the later one changes nothing.
    for result in (normal, verbose):
        assert (result.verdict, result.reason, result.code, result.decided_by) == ("rejected", "spam", "blocked", 2)


def test_verbose_goes_on_after_a_hold_and_after_an_error_that_rejects():
    result = run(
        step(Hold("look at it"), "hold", config_id=1),
        step(Raises(), "raises", config_id=2),
        step(Keep(), "keep", config_id=3),
        verbose=True,
    )

    assert [(e.outcome, e.stopped, e.after_stop) for e in result.trail] == [
        ("held", True, False),
        ("error", False, True),
        ("kept", False, True),
    ]
    assert (result.verdict, result.reason, result.decided_by) == ("held", "look at it", 1)

    failed = run(step(Raises(), "raises", config_id=5, on_error="reject"), step(Keep(), "keep"), verbose=True)
    assert [(e.outcome, e.stopped, e.after_stop) for e in failed.trail] == [
        ("error", True, False),
        ("kept", False, True),
    ]
    assert (failed.verdict, failed.decided_by) == ("rejected", 5)


def test_verbose_records_the_payload_after_each_transform():
    result = run(
        step(Upper(), "upper"),
        step(Keep(), "keep"),
        step(SetKey("n", 2), "set_n"),
        step(ReturnsSame(), "same"),
        payload={"text": "hi"},
        verbose=True,
    )

    assert [e.payload for e in result.trail] == [{"text": "HI"}, None, {"text": "HI", "n": 2}, None]
    assert result.payload == {"text": "HI", "n": 2} and result.transformed
    assert not any(e.stopped or e.after_stop for e in result.trail)


def test_verbose_shows_transforms_after_the_stop_but_the_result_keeps_the_payload_it_was_decided_on():
    upper = Upper()
    result = run(
        step(SetKey("n", 1), "set_n"),
        step(Drop(), "drop", config_id=2),
        step(upper, "upper"),
        payload={"text": "hi"},
        verbose=True,
    )

    assert upper.seen == [{"text": "hi", "n": 1}]  # the later transform sees the payload as changed
    assert [(e.hook, e.outcome, e.payload) for e in result.trail] == [
        ("set_n", "transformed", {"text": "hi", "n": 1}),
        ("drop", "dropped", None),
        ("upper", "transformed", {"text": "HI", "n": 1}),
    ]
    normal = run(
        step(SetKey("n", 1), "set_n"), step(Drop(), "drop", config_id=2), step(Upper(), "upper"), payload={"text": "hi"}
    )
    assert (result.verdict, result.payload, result.transformed) == (normal.verdict, normal.payload, True)
    assert result.payload == {"text": "hi", "n": 1}


def test_verbose_records_what_an_observing_transform_would_have_produced():
    result = run(step(Upper(), "upper", mode="observe"), step(Keep(), "keep"), payload={"text": "hi"}, verbose=True)

    assert (result.trail[0].outcome, result.trail[0].payload) == ("observed", {"text": "HI"})
    assert result.payload == {"text": "hi"} and not result.transformed


def test_a_normal_run_keeps_no_payloads_and_stores_its_trail_as_before():
    result = run(step(Upper(), "upper"), step(Drop(), "drop"), payload={"text": "hi"})

    assert [e.payload for e in result.trail] == [None, None]
    assert [e.stopped for e in result.trail] == [False, True]
    assert set(result.trail[1].as_dict()) == {
        "config_id",
        "hook",
        "label",
        "position",
        "outcome",
        "code",
        "message",
        "duration_ms",
        "would",
    }
    assert result.as_dict()["verbose"] is False


def test_a_verbose_result_as_dict_carries_the_marks_and_payloads():
    result = run(
        step(Upper(), "upper"), step(Drop("no"), "drop"), step(Keep(), "keep"), payload={"text": "hi"}, verbose=True
    )

    data = result.as_dict()
    assert data["verbose"] is True and data["payload"] == {"text": "HI"}
    assert [(e["hook"], e["stopped"], e["after_stop"], e["payload"]) for e in data["trail"]] == [
        ("upper", False, False, {"text": "HI"}),
        ("drop", True, False, None),
        ("keep", False, True, None),
    ]


# --- trail ------------------------------------------------------------------------------------


def test_trail_entries_have_durations_and_serialise():
    result = run(
        step(Keep(), "k", label="Keeper", config_id=1, position=0), step(Sleeps(0.01), "s", config_id=2, position=1)
    )

    assert all(e.duration_ms >= 0 for e in result.trail)
    assert result.trail[1].duration_ms >= 10
    assert result.duration_ms >= result.trail[1].duration_ms
    as_dict = result.trail[0].as_dict()
    assert set(as_dict) == {
        "config_id",
        "hook",
        "label",
        "position",
        "outcome",
        "code",
        "message",
        "duration_ms",
        "would",
    }
    assert as_dict["hook"] == "k" and as_dict["label"] == "Keeper" and as_dict["config_id"] == 1
    assert as_dict["outcome"] == "kept"


def test_as_dict_rounds_duration():
    entry = pipeline.TrailEntry(hook="h", label="", config_id=None, position=0, outcome="kept", duration_ms=1.23456789)

    assert entry.as_dict()["duration_ms"] == 1.235


# --- sinks and callbacks ----------------------------------------------------------------------


def test_sinks_are_split_from_judging_steps_and_never_judge():
    sink = step(Recorder(), "recorder")
    keep = step(Keep(), "keep")
    transform = step(Upper(), "upper")
    p = Pipeline([sink, keep, transform])

    assert p.steps == (sink, keep, transform)
    assert p.judging == (keep, transform)
    assert p.sinks == (sink,)
    result = p.run(Item(payload={"text": "hi"}))
    assert [e.hook for e in result.trail] == ["keep", "upper"]
    assert sink.hook.events == []


def test_notify_calls_each_sink_past_a_failure():
    first, last = Recorder(), Recorder()
    sinks = [
        step(first, "first"),
        step(BrokenSink(), "broken", label="Mailer"),
        step(OnlyOnHold(), "holdonly"),
        step(last, "last"),
    ]
    item = Item(payload={"text": "hi"})
    result = Pipeline(sinks).run(item)

    failures = pipeline.notify(sinks, pipeline.verdict_event(result.verdict), item, result)

    assert first.events == [("accept", {"text": "hi"}, "accepted")]
    assert last.events == [("accept", {"text": "hi"}, "accepted")]
    assert sinks[2].hook.called is False
    assert failures == [(sinks[1], "RuntimeError: mail server down")]


def test_notify_with_no_failures_returns_empty_list():
    recorder = Recorder()
    sinks = [step(recorder)]
    item = Item(payload={"x": 1})
    result = pipeline.Result(verdict=pipeline.REJECTED, payload={"x": 1})

    assert pipeline.notify(sinks, "on_reject", item, result) == []
    assert recorder.events == [("reject", {"x": 1}, "rejected")]


def test_verdict_event_names():
    assert pipeline.verdict_event(pipeline.ACCEPTED) == "on_accept"
    assert pipeline.verdict_event(pipeline.REJECTED) == "on_reject"
    assert pipeline.verdict_event(pipeline.HELD) == "on_hold"


def test_on_step_is_called_before_each_step():
    events = []

    class Noting:
        kind = "filter"

        def __init__(self, name):
            self.name = name

        def filter(self, item):
            events.append(("ran", self.name))
            return pipeline.keep()

    a, b = step(Noting("a"), "a"), step(Noting("b"), "b")
    sink = step(Recorder(), "sink")
    Pipeline([a, sink, b]).run(Item(payload={}), on_step=lambda s: events.append(("before", s)))

    assert events == [("before", a), ("ran", "a"), ("before", b), ("ran", "b")]


def test_on_step_stops_with_the_run():
    seen = []
    a, b = step(Drop(), "a"), step(Keep(), "b")
    Pipeline([a, b]).run(Item(payload={}), on_step=seen.append)

    assert seen == [a]


# --- purity -----------------------------------------------------------------------------------


# What `core` may import is an import-linter contract of `make lint`; this checks what importing it loads.
CORE_MODULES = sorted(f"stash.core.{path.stem}" for path in (REPO / "stash" / "core").glob("[!_]*.py"))


@pytest.mark.parametrize("module", ["stash", "stash.core", *CORE_MODULES])
def test_importing_the_core_loads_neither_django_nor_celery(module):
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); import {module}; "
        "print(sorted(m for m in sys.modules if m.startswith(('django', 'celery'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/", env={"PATH": "/usr/bin:/bin"}
    )

    assert out.stdout.strip() == "[]"
