"""Lifecycle callbacks: on_pipeline_start, on_accept / on_reject / on_hold, on_error, on_pipeline_end."""

import logging

import pytest

from stash import hooks, processing
from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Result, Step, TrailEntry
from stash.models import Content

# --- the pure core ----------------------------------------------------------------------------


class Everything:
    """Takes every callback and notes each call."""

    kind = "sink"

    def __init__(self):
        self.calls = []

    def on_pipeline_start(self, item):
        self.calls.append(("on_pipeline_start", item.payload))

    def __getattr__(self, event):
        if event not in pipeline.LIFECYCLE_EVENTS:
            raise AttributeError(event)
        return lambda item, result: self.calls.append((event, result.verdict))


class Choosy(Everything):
    def listens_to(self, event):
        return event != pipeline.ON_REJECT


def entry(outcome):
    return TrailEntry(hook="h", label="", config_id=1, position=1, outcome=outcome)


@pytest.mark.parametrize(
    ("verdict", "outcomes", "events"),
    [
        ("accepted", ["kept"], ("on_accept",)),
        ("rejected", ["dropped"], ("on_reject",)),
        ("held", ["held"], ("on_hold",)),
        ("rejected", ["kept", "error"], ("on_reject", "on_error")),
        ("accepted", ["timeout", "kept"], ("on_accept", "on_error")),
        ("held", ["error", "error"], ("on_hold", "on_error")),
        ("accepted", ["observed", "skipped", "transformed"], ("on_accept",)),
    ],
)
def test_result_events_are_the_verdict_then_on_error_if_a_step_failed(verdict, outcomes, events):
    result = Result(verdict=verdict, payload={}, trail=tuple(entry(o) for o in outcomes))

    assert pipeline.result_events(result) == events


def test_listens_needs_the_method_and_the_hooks_consent():
    class Bare:
        kind = "filter"

    assert not pipeline.listens(Bare(), "on_accept")
    assert pipeline.listens(Everything(), "on_reject")
    assert not pipeline.listens(Choosy(), "on_reject")
    assert pipeline.listens(Choosy(), "on_accept")
    assert not pipeline.listens(type("NotCallable", (), {"on_accept": 3})(), "on_accept")


def test_a_hook_whose_listens_to_raises_is_not_called():
    class Buggy(Everything):
        def listens_to(self, event):
            raise KeyError("events")

    hook = Buggy()
    step = Step(hook=hook, name="buggy")

    assert Pipeline([step]).listeners("on_accept") == ()
    assert pipeline.notify([step], "on_accept", Item(payload={}), Result(verdict="accepted", payload={})) == []
    assert hook.calls == []


def test_listeners_are_hooks_of_any_kind_in_pipeline_order():
    class StartingFilter:
        kind = "filter"

        def filter(self, item):
            return pipeline.keep()

        def on_pipeline_start(self, item):
            pass

    first, sink, last = (
        Step(hook=StartingFilter(), name="a"),
        Step(hook=Everything(), name="b"),
        Step(hook=Choosy(), name="c"),
    )
    p = Pipeline([first, sink, last])

    assert p.listeners("on_pipeline_start") == (first, sink, last)
    assert p.listeners("on_reject") == (sink,)
    assert p.listeners("on_accept") == (sink, last)


def test_notify_passes_the_item_alone_at_the_start_and_item_and_result_after():
    hook = Everything()
    step = Step(hook=hook, name="everything")
    item = Item(payload={"n": 1})

    assert pipeline.notify([step], "on_pipeline_start", item) == []
    assert pipeline.notify([step], "on_pipeline_end", item, Result(verdict="held", payload={})) == []

    assert hook.calls == [("on_pipeline_start", {"n": 1}), ("on_pipeline_end", "held")]


def test_run_itself_calls_no_callbacks():
    hook = Everything()

    Pipeline([Step(hook=hook, name="everything")]).run(Item(payload={}))

    assert hook.calls == []


# --- in processing: order, async sinks, failures, stale claims --------------------------------

CALLS = []


class Watcher(hooks.Filter):
    """Keep everything; note the run's start and end."""

    def filter(self, item):
        CALLS.append(("filter", item.payload.get("n")))
        if item.payload.get("boom"):
            raise RuntimeError("boom")
        if item.payload.get("edit"):  # an edit while the run goes on: the claim is lost
            content = Content.objects.get(pk=item.id)
            content.payload = {"n": item.payload["n"], "edited": True}
            content.save()
        return self.hold("look", "look") if item.payload.get("hold") else self.keep()

    def on_pipeline_start(self, item):
        CALLS.append(("start", item.payload.get("n")))

    def on_pipeline_end(self, item, result):
        CALLS.append(("end", item.payload.get("n"), result.verdict))


class Recorder(hooks.Sink):
    """Note every verdict event, in process."""

    def on_accept(self, item, result):
        CALLS.append(("accept", item.payload.get("n")))

    def on_reject(self, item, result):
        CALLS.append(("reject", item.payload.get("n"), result.reason))

    def on_hold(self, item, result):
        CALLS.append(("hold", item.payload.get("n")))

    def on_error(self, item, result):
        CALLS.append(("error", item.payload.get("n"), [e.outcome for e in result.trail]))


class Remote(Recorder):
    """The same, delivered by its own task."""

    deliver_async = True

    def on_pipeline_end(self, item, result):
        CALLS.append(("remote end", item.payload.get("n")))


class Broken(hooks.Sink):
    """Fail in every callback."""

    def on_pipeline_start(self, item):
        raise RuntimeError("start failed")

    def on_accept(self, item, result):
        raise RuntimeError("accept failed")


@pytest.fixture
def lifecycle_hooks(register_temporarily):
    CALLS.clear()
    for name, cls in (
        ("test_watcher", Watcher),
        ("test_recorder", Recorder),
        ("test_remote", Remote),
        ("test_broken", Broken),
    ):
        register_temporarily(name, cls)
    yield
    CALLS.clear()


def stash_with(make_stash, *hooks, on_error="reject"):
    """A stash with ``hooks``: names of hooks without params, or ``(name, params)``."""
    return make_stash("audit", hooks=[(h, {}) if isinstance(h, str) else h for h in hooks], on_error=on_error)


def judge(stash, *payloads):
    ids = [Content.objects.create(stash=stash, payload=payload).pk for payload in payloads]
    return ids, processing.judge(ids)


@pytest.mark.django_db
def test_each_item_gets_start_its_verdict_then_end_in_that_order(make_stash, lifecycle_hooks):
    stash = stash_with(make_stash, "test_watcher", "test_recorder", ("require_fields", {"fields": ["text"]}))

    judge(stash, {"n": 1, "text": "hi"}, {"n": 2})

    # The whole batch is judged first, each item after its start...
    judging, announcing = CALLS[:4], CALLS[4:]
    assert sorted(judging) == [("filter", 1), ("filter", 2), ("start", 1), ("start", 2)]
    assert judging.index(("start", 1)) + 1 == judging.index(("filter", 1))
    assert judging.index(("start", 2)) + 1 == judging.index(("filter", 2))
    # ...then, once stored, each verdict is announced and followed by that item's end.
    pairs = sorted(zip(announcing[::2], announcing[1::2], strict=True), key=lambda pair: pair[0][1])
    assert pairs == [(("accept", 1), ("end", 1, "accepted")), (("reject", 2, "missing text"), ("end", 2, "rejected"))]


@pytest.mark.django_db
def test_a_hook_error_calls_on_error_after_the_verdict(make_stash, lifecycle_hooks):
    stash = stash_with(make_stash, "test_watcher", "test_recorder", on_error="skip")

    judge(stash, {"n": 1, "boom": True})

    assert CALLS == [("start", 1), ("filter", 1), ("accept", 1), ("error", 1, ["error"]), ("end", 1, "accepted")]


@pytest.mark.django_db
def test_a_hold_calls_on_hold(make_stash, lifecycle_hooks):
    judge(stash_with(make_stash, "test_watcher", "test_recorder"), {"n": 1, "hold": True})

    assert ("hold", 1) in CALLS and CALLS[-1] == ("end", 1, "held")


@pytest.mark.django_db
def test_async_sinks_get_their_verdict_events_through_a_task_and_the_end_in_process(make_stash, lifecycle_hooks):
    stash = stash_with(make_stash, "test_watcher", "test_remote", on_error="skip")
    remote = stash.hooks.get(hook="test_remote")

    ids, report = judge(stash, {"n": 1, "boom": True})

    assert [delivery.args for delivery in report.deliveries] == [
        [remote.pk, str(ids[0]), "on_accept", 1],
        [remote.pk, str(ids[0]), "on_error", 1],
    ]
    assert ("accept", 1) not in CALLS  # not called inside the run
    assert ("remote end", 1) in CALLS  # the end is not a network event: called at once
    for delivery in report.deliveries:
        processing.deliver(*delivery.args)
    assert CALLS[-2:] == [("accept", 1), ("error", 1, ["error"])]


@pytest.mark.django_db
def test_failing_callbacks_are_logged_and_change_no_verdict(make_stash, lifecycle_hooks, caplog):
    stash = stash_with(make_stash, "test_broken", "test_watcher")

    with caplog.at_level(logging.ERROR, logger="stash.processing"):
        ids, report = judge(stash, {"n": 1})

    assert report.verdicts == {"accepted": 1}
    assert Content.objects.get(pk=ids[0]).status == "accepted"
    assert CALLS == [("start", 1), ("filter", 1), ("end", 1, "accepted")]
    assert caplog.messages == [
        f"Hook test_broken failed in on_pipeline_start for {ids[0]}: RuntimeError: start failed",
        f"Hook test_broken failed in on_accept for {ids[0]}: RuntimeError: accept failed",
    ]


@pytest.mark.django_db
def test_an_item_whose_claim_was_lost_gets_only_the_end(make_stash, lifecycle_hooks):
    stash = stash_with(make_stash, "test_watcher", "test_recorder", "test_remote")

    ids, report = judge(stash, {"n": 1, "edit": True})

    assert report.stale == 1 and report.deliveries == []
    assert CALLS == [("start", 1), ("filter", 1), ("end", 1, "accepted"), ("remote end", 1)]
    assert Content.objects.get(pk=ids[0]).status == "pending"  # its new revision waits for its own run


@pytest.mark.django_db
def test_a_simulation_calls_no_callbacks(make_stash, lifecycle_hooks):
    stash = stash_with(make_stash, "test_watcher", "test_recorder", "test_broken")

    result = processing.simulate(stash, {"n": 1})

    assert result.verdict == "accepted"
    assert [(entry.hook, entry.outcome) for entry in result.trail] == [("test_watcher", "kept")]
    assert CALLS == []  # the hooks ran in a child process (processing.child_process), no callback here


@pytest.mark.django_db
def test_a_reviewers_verdict_reaches_in_process_sinks(
    make_stash, register_temporarily, admin_user, django_capture_on_commit_callbacks
):
    heard = []

    class Recorder(hooks.Sink):
        """Records the verdict events it hears."""

        def on_accept(self, item, result):
            heard.append(("accept", item.id, result.reason))

    register_temporarily("test_review_recorder", Recorder)
    stash = make_stash("reviewed", hooks=[("require_fields", {"fields": ["time"]}), ("test_review_recorder", {})])
    item = Content.objects.create(stash=stash, payload={"text": "no time"})
    processing.judge([item.pk])
    assert heard == []  # rejected by the hooks: no on_accept
    with django_capture_on_commit_callbacks(execute=True):
        assert processing.overturn(Content.objects.filter(pk=item.pk), admin_user, "it is fine") == 1
    assert heard == [("accept", str(item.pk), "overturned in review (was rejected: missing time)")]
