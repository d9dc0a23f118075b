"""Runs that only look (simulate, replay, golden examples) never ask an asynchronous hook's service:
they say the item would wait. In core: an answer given in the service's place is used instead."""

import pytest

from stash import processing
from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step
from stash.core.testing import build_hook
from stash.models import Content, Example

from ..support.fake_moderation import async_hook
from .conftest import SERVICE_SECRET

pytestmark = pytest.mark.django_db

SECRET = SERVICE_SECRET


@pytest.fixture
def stash(make_stash, service):
    blocklist = {"hook": "keyword_blocklist", "params": {"words": ["spam"]}, "position": 1}
    return make_stash("vendor", hooks=[blocklist, async_hook(service, SECRET, position=2)])


def test_simulate_says_the_item_would_wait_without_asking_the_service(stash, service):
    result = processing.simulate(stash, {"text": "hello"}, verbose=True)

    assert result.verdict == "waiting"
    entry = result.trail[1]
    assert (entry.title, entry.outcome, entry.stopped) == ("Vendor", "waiting", True)
    assert "would wait" in entry.message
    assert service.requests == []


def test_simulate_still_rejects_before_the_wait(stash, service):
    assert processing.simulate(stash, {"text": "buy spam"}).verdict == "rejected"
    assert service.requests == []


def test_golden_examples_may_expect_an_item_to_wait(stash, service):
    waits = Example.objects.create(stash=stash, name="asks", payload={"text": "hello"}, verdict="waiting")
    accepted = Example.objects.create(stash=stash, name="wrong", payload={"text": "hello"}, verdict="accepted")

    results = {result.name: result for result in processing.run_examples(stash)}

    assert results["asks"].passed
    assert not results["wrong"].passed
    assert "expected accepted, got waiting" in " ".join(results["wrong"].problems)
    assert service.requests == [] and waits.pk and accepted.pk


def test_replay_says_an_item_would_now_wait(stash, service):
    item = Content.objects.create(stash=stash, payload={"text": "hello"})
    Content.objects.filter(pk=item.pk).update(status="accepted")

    report = processing.replay(stash, 10)

    [change] = report.changes
    assert (change.before, change.result.verdict) == ("accepted", "waiting")
    assert service.requests == []


def test_a_looking_run_may_be_given_the_services_answer_and_goes_on_with_it(service):
    hook = build_hook("moderation_api", {"url": service.url, "secret": SECRET, "fields": ["t"], "mode": "async"})
    after = build_hook("keyword_blocklist", {"words": ["spam"]})
    steps = [Step(hook=hook, name="moderation_api", config_id=7), Step(hook=after, name="keyword_blocklist")]

    kept = Pipeline(steps).looking({7: pipeline.keep()}).run(Item(payload={"t": "buy spam"}))
    dropped = Pipeline(steps).looking({7: pipeline.drop("toxic")}).run(Item(payload={"t": "hello"}))

    assert (kept.verdict, kept.trail[0].outcome, kept.trail[1].outcome) == ("rejected", "kept", "dropped")
    assert (dropped.verdict, dropped.reason) == ("rejected", "toxic")
    assert service.requests == []
