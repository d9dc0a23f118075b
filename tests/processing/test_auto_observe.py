"""A hook whose precision falls below its ``min_precision`` is switched to observe by the system: one
version saying why, a warning on its admin pages, a log line and a metric; never below the minimum
count, never twice, and not again for the decisions that made it switch once an operator switches it back."""

import logging

import pytest
from django.urls import reverse

from stash import processing, tasks
from stash.db import publishing
from stash.models import Content, Example, HookConfig, PipelineVersion
from tests.support.metrics_support import scrape
from tests.support.precision import judge_stash, judged, people

pytestmark = pytest.mark.django_db

SWITCHED = "Switched 'Judge' to observe: precision 0.20 over 5 human decisions in 30 days, below its minimum 0.80"


@pytest.fixture
def stash(make_stash, register_temporarily):
    return judge_stash(make_stash, register_temporarily, hook={"min_precision": 0.8, "min_precision_count": 5})


@pytest.fixture
def rita(django_user_model):
    return people(django_user_model, "rita")["rita"]


@pytest.fixture
def decide(django_capture_on_commit_callbacks, broker):
    """``decide(processing.approve, items, user)``: a person's decision, committed (its checks published)."""

    def run(decision, items, user):
        with django_capture_on_commit_callbacks(execute=True):
            decision(Content.objects.filter(pk__in=[item.pk for item in items]), user)

    return run


def checks_sent(broker):
    return [message["args"] for message in broker.messages if message["name"] == publishing.PRECISION_TASK]


def run_checks(broker):
    """Run each precision check published, as the sinks worker does, and forget them."""
    for args in checks_sent(broker):
        tasks.check_precision(*args)
    broker.messages.clear()


def test_a_hook_whose_held_items_are_mostly_approved_is_switched_to_observe(
    stash, rita, decide, broker, caplog, admin_client, client
):
    config = stash.hooks.get()
    held = [judged(stash, f"question {n}?") for n in range(5)]
    decide(processing.approve, held[:4], rita)
    decide(processing.reject, held[4:], rita)
    assert checks_sent(broker) == [[config.pk], [config.pk]]  # the reviewer's request only sent them
    assert HookConfig.objects.get(pk=config.pk).mode == "enforce"
    versions = PipelineVersion.objects.filter(stash=stash).count()

    with caplog.at_level(logging.WARNING, logger="stash.processing.auto_observe"):
        run_checks(broker)

    config.refresh_from_db()
    assert config.mode == "observe" and config.auto_observed_at is not None
    assert PipelineVersion.objects.filter(stash=stash).count() == versions + 1
    version = PipelineVersion.objects.filter(stash=stash).order_by("-number").first()
    assert version.summary == f"{SWITCHED}: Judge: mode enforce → observe"
    assert version.created_by is None and version.document["hooks"][0]["mode"] == "observe"
    assert [r.levelname for r in caplog.records if SWITCHED in r.getMessage()] == ["WARNING"]
    assert (
        scrape(client).value("stash_hook_auto_observed_total", stash="judged", config=config.pk, hook="test_judge") == 1
    )

    warning = "Hook &#x27;Judge&#x27; was switched to observe by the system on"
    assert warning in admin_client.get(reverse("admin:stash_stash_change", args=[stash.pk])).content.decode()
    assert warning in admin_client.get(reverse("admin:stash_hookconfig_change", args=[config.pk])).content.decode()
    # Spam is still judged by the new version, only observed: accepted.
    assert judged(stash, "spam").status == "accepted"


def test_no_switch_below_the_minimum_count_or_above_the_minimum(stash, rita, decide, broker):
    config = stash.hooks.get()
    decide(processing.approve, [judged(stash, f"q{n}?") for n in range(4)], rita)
    run_checks(broker)
    assert HookConfig.objects.get(pk=config.pk).mode == "enforce"  # 0.00 over 4: too few to say

    decide(processing.reject, [judged(stash, f"r{n}?") for n in range(16)], rita)
    run_checks(broker)
    assert HookConfig.objects.get(pk=config.pk).mode == "enforce"  # 0.80 over 20: not below


def test_a_hook_without_a_minimum_or_observing_sends_no_check(make_stash, register_temporarily, rita, decide, broker):
    free = judge_stash(make_stash, register_temporarily, slug="free")
    watching = judge_stash(
        make_stash, register_temporarily, slug="watching", hook={"min_precision": 0.8, "mode": "observe"}
    )
    decide(processing.approve, [judged(free, "q?")], rita)
    decide(processing.overturn, [judged(watching, "q?")], rita)
    assert checks_sent(broker) == []


def test_switched_once_and_not_again_for_old_decisions_after_the_operator_switches_it_back(stash, rita, decide, broker):
    config = stash.hooks.get()
    decide(processing.approve, [judged(stash, f"q{n}?") for n in range(4)], rita)
    waiting = judged(stash, "judged before the switch?")
    decide(processing.reject, [judged(stash, "r?")], rita)
    run_checks(broker)
    tasks.check_precision(config.pk)  # a second check finds it observing: nothing more
    assert PipelineVersion.objects.filter(stash=stash, summary__startswith="Switched").count() == 1

    config.refresh_from_db()
    config.mode = "enforce"
    processing.save_hook(config)  # the operator switches it back
    config.refresh_from_db()
    assert config.auto_observed_at is None and config.precision_since is not None

    decide(processing.approve, [waiting], rita)  # a decision on what it judged before the switch
    run_checks(broker)
    assert HookConfig.objects.get(pk=config.pk).mode == "enforce"

    decide(processing.approve, [judged(stash, f"new {n}?") for n in range(5)], rita)
    run_checks(broker)
    assert HookConfig.objects.get(pk=config.pk).mode == "observe"  # its new verdicts are as bad
    assert PipelineVersion.objects.filter(stash=stash, summary__startswith="Switched").count() == 2


def test_appeals_send_the_check_and_a_breaking_golden_example_does_not_stop_the_switch(
    make_stash, register_temporarily, django_user_model, django_capture_on_commit_callbacks, broker
):
    stash = judge_stash(
        make_stash, register_temporarily, examples_policy="block", hook={"min_precision": 0.9, "min_precision_count": 2}
    )
    Example.objects.create(stash=stash, name="spam", payload={"text": "spam"}, verdict="rejected")
    team = people(django_user_model, "sam", "rob")
    for text in ("spam 1", "spam 2"):
        appeal = processing.appeal(judged(stash, text), "not spam", team["sam"])
        with django_capture_on_commit_callbacks(execute=True):
            processing.decide_appeal(appeal.pk, "reversed", "", team["rob"])
    run_checks(broker)
    assert stash.hooks.get().mode == "observe"  # the example now fails; observing only loosens
