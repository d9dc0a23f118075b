"""The worker judges the items of a stash with a batched hook together: the hook is called once."""

from __future__ import annotations

import pytest

from stash import hooks, processing
from stash.models import Content, Example, PipelineRun

BATCHES: list[list[int]] = []


def _decide(hook, item):
    text = item.payload.get("text", "")
    if "spam" in text:
        return hook.drop(f"spam in {text!r}", "spam", "text")
    if text.isupper():
        return hook.hold("shouting", "shouting", "text")
    return hook.keep()


class SpamOneByOne(hooks.Filter):
    """Drops spam, holds shouting: one item at a time."""

    def filter(self, item):
        return _decide(self, item)


class SpamBatched(hooks.Filter):
    """The same, judged a batch at a time."""

    def filter_many(self, items):
        BATCHES.append([item.payload["n"] for item in items])
        return [_decide(self, item) for item in items]


class Tag(hooks.Transform):
    """Adds ``seen`` to the payload: what the next hook reads is what was stored."""

    def transform(self, item):
        return {**item.payload, "text": item.payload.get("text", "").replace("SPAM", "spam"), "seen": True}


PAYLOADS = [
    {"n": 1, "text": "hello"},
    {"n": 2},  # no text: rejected by require_fields, never reaches the batched hook
    {"n": 3, "text": "buy SPAM now"},  # the transform lowers it: dropped
    {"n": 4, "text": "LOUD"},  # held
    {"n": 5, "text": "fine", "skip": True},  # the condition skips it
    {"n": 6, "text": "calm"},
]


@pytest.fixture
def stashes(make_stash, register_temporarily):
    BATCHES.clear()
    register_temporarily("test_spam_one_by_one", SpamOneByOne)
    register_temporarily("test_spam_batched", SpamBatched)
    register_temporarily("test_tag", Tag)

    def make(slug, spam_hook):
        return make_stash(
            slug,
            hooks=[
                {"hook": "require_fields", "params": {"fields": ["text"]}, "position": 1},
                {"hook": "test_tag", "params": {}, "position": 2},
                {"hook": spam_hook, "params": {}, "position": 3, "condition": "!has(payload.skip)"},
            ],
        )

    yield make("one-by-one", "test_spam_one_by_one"), make("batched", "test_spam_batched")
    BATCHES.clear()


def _outcome(stash, ids):
    contents = {c.pk: c for c in Content.objects.filter(pk__in=ids)}
    runs = {run.content_id: run for run in PipelineRun.objects.filter(content_id__in=ids)}
    return [
        (
            contents[pk].status,
            contents[pk].reason,
            contents[pk].payload,
            [
                {key: value for key, value in entry.items() if key not in ("duration_ms", "config_id", "hook")}
                for entry in runs[pk].trail
            ],
        )
        for pk in ids
    ]


@pytest.mark.django_db
def test_the_worker_calls_a_batched_hook_once_and_records_what_one_at_a_time_records(stashes):
    one_by_one, batched = stashes
    # Both stashes' items in one message, interleaved.
    ids = {one_by_one.pk: [], batched.pk: []}
    for payload in PAYLOADS:
        for stash in stashes:
            ids[stash.pk].append(Content.objects.create(stash=stash, payload=payload).pk)

    report = processing.judge([pk for pair in zip(*ids.values(), strict=True) for pk in pair])

    assert report.judged == 12
    assert BATCHES == [[1, 3, 4, 6]]  # once, with the items alive at its position whose condition holds
    assert _outcome(batched, ids[batched.pk]) == _outcome(one_by_one, ids[one_by_one.pk])
    assert [status for status, *_ in _outcome(batched, ids[batched.pk])] == [
        "accepted",
        "rejected",
        "rejected",
        "held",
        "accepted",
        "accepted",
    ]
    # The accepted items join the stash's queue in the order they came.
    accepted = Content.objects.filter(stash=batched, status="accepted").order_by("queue_seq")
    assert [content.payload["n"] for content in accepted] == [1, 5, 6]
    hook = batched.hooks.get(hook="test_spam_batched")
    assert (hook.runs_count, hook.dropped_count, hook.held_count, hook.kept_count) == (4, 1, 1, 2)


@pytest.mark.django_db
def test_simulate_runs_a_batched_hook_on_one_item(stashes):
    _one_by_one, batched = stashes
    result = processing.simulate(batched, {"n": 7, "text": "SPAM"})
    assert (result.verdict, result.reason) == ("rejected", "spam in 'spam'")


@pytest.mark.django_db
def test_a_batch_takes_only_the_items_whose_budgets_fit_together_in_the_message(stashes, monkeypatch):
    _one_by_one, batched = stashes
    batched.hooks.update(timeout_ms=1000)  # three hooks: a budget of 3 s an item
    processing.forget_cached()
    batched.refresh_from_db()
    ids = [Content.objects.create(stash=batched, payload={"n": n, "text": "hi"}).pk for n in range(5)]
    sent = []
    monkeypatch.setattr(processing.publishing, "send_on_commit", lambda ids, **options: ids and sent.append(ids))

    # 14.5 s, 5 s of which are the margin: three items' budgets fit, judged in one call.
    report = processing.judge(ids, clock=processing.Clock(limit=14.5))

    assert (report.judged, report.released) == (3, 2)
    assert BATCHES == [[0, 1, 2]]
    assert sent == [ids[3:]]  # the rest go back to the queue, together
    statuses = [Content.objects.get(pk=pk).status for pk in ids]
    assert statuses == ["accepted", "accepted", "accepted", "pending", "pending"]


@pytest.mark.django_db
def test_golden_examples_and_replay_run_a_batched_hook_one_item_at_a_time(stashes):
    _one_by_one, batched = stashes
    Example.objects.create(stash=batched, name="spam", payload={"n": 8, "text": "SPAM"}, verdict="rejected")
    Example.objects.create(stash=batched, name="calm", payload={"n": 9, "text": "calm"}, verdict="accepted")
    assert sorted((r.name, r.verdict, r.passed) for r in processing.run_examples(batched)) == [
        ("calm", "accepted", True),
        ("spam", "rejected", True),
    ]

    ids = [Content.objects.create(stash=batched, payload=payload).pk for payload in PAYLOADS]
    processing.judge(ids)
    report = processing.replay(batched, 10)
    assert (report.compared, report.changes) == (6, [])
