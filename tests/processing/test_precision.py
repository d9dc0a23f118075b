"""Hook precision: of the items an enforcing hook rejected or held, the share people kept rejected,
over the last 7 and 30 days, each kind of decision counted once per item."""

import pytest

from stash import processing
from stash.models import Content, HookConfig
from stash.processing import precision, stats
from tests.support.precision import decided_ago, judge_stash, judged, people

pytestmark = pytest.mark.django_db


@pytest.fixture
def stash(make_stash, register_temporarily):
    return judge_stash(make_stash, register_temporarily)


@pytest.fixture
def team(django_user_model):
    return people(django_user_model, "rita", "rob", "sam")


def one(item):
    return Content.objects.filter(pk=item.pk)


def figures(stash):
    config = stash.hooks.get()
    return processing.hook_precision([config])[config.pk]


def test_each_kind_of_decision_counts_as_confirmed_or_reversed(stash, team):
    rita, rob = team["rita"], team["rob"]
    processing.approve(one(judged(stash, "why?")), rita)  # a held item approved: reversed
    processing.reject(one(judged(stash, "who?")), rita)  # a held item rejected: confirmed
    processing.overturn(one(judged(stash, "spam 1")), rita)  # a rejection overturned: reversed
    upheld = processing.appeal(judged(stash, "spam 2"), "not spam", team["sam"])
    processing.decide_appeal(upheld.pk, "upheld", "", rob)  # a rejection upheld on appeal: confirmed
    reversed_ = processing.appeal(judged(stash, "spam 3"), "not spam", team["sam"])
    processing.decide_appeal(reversed_.pk, "reversed", "", rob)  # an appeal reversed: reversed
    judged(stash, "spam 4")  # no one decided: not counted
    judged(stash, "plain")  # kept: the hook decided nothing

    month = figures(stash)[30]
    assert (month.confirmed, month.reversed, month.decisions) == (2, 3, 5)
    assert month.value == pytest.approx(0.4)
    assert figures(stash)[7] == month


def test_an_item_counts_once_by_its_latest_decision(stash, team):
    item = judged(stash, "why?")
    processing.reject(one(item), team["rita"])  # confirmed, for now
    appeal = processing.appeal(Content.objects.get(pk=item.pk), "a question, not spam", team["sam"])
    processing.decide_appeal(appeal.pk, "reversed", "", team["rob"])  # then reversed on appeal

    month = figures(stash)[30]
    assert (month.confirmed, month.reversed) == (0, 1)


def test_windows_count_decisions_by_when_they_were_made(stash, team):
    recent, older, old = judged(stash, "a?"), judged(stash, "b?"), judged(stash, "c?")
    processing.reject(one(recent), team["rita"])
    processing.approve(one(older), team["rita"])
    processing.approve(one(old), team["rita"])
    decided_ago(recent, 3)
    decided_ago(older, 20)
    decided_ago(old, 40)

    week, month = figures(stash)[7], figures(stash)[30]
    assert (week.confirmed, week.reversed, week.value) == (1, 0, 1.0)
    assert (month.confirmed, month.reversed, month.value) == (1, 1, 0.5)


def test_no_decision_is_no_precision_and_automatic_or_first_decisions_are_none(make_stash, register_temporarily, team):
    stash = judge_stash(make_stash, register_temporarily, slug="two", four_eyes_reasons=["question"])
    processing.approve(one(judged(stash, "a?")), team["rita"])  # the first of two approvals: still held
    processing.decide_automatically(one(judged(stash, "b?")), "accepted", "expired")  # no person's word

    month = figures(stash)[30]
    assert (month.decisions, month.value) == (0, None)


def test_a_decision_replaced_by_a_new_judgement_leaves_the_count(stash, team):
    item = judged(stash, "why?")
    processing.approve(one(item), team["rita"])
    processing.reprocess(one(item), include_reviewed=True)
    assert figures(stash)[30].decisions == 0


def test_observing_hooks_have_no_precision_and_stats_carry_it_for_enforcing_ones(stash, team):
    processing.approve(one(judged(stash, "why?")), team["rita"])
    config = stash.hooks.get()
    assert stats.for_configs([config])[config.pk].precision[30].reversed == 1

    HookConfig.objects.filter(pk=config.pk).update(mode="observe")
    config.refresh_from_db()
    assert processing.hook_precision([config]) == {}
    assert stats.for_configs([config])[config.pk].precision == {}
    assert precision.for_enforcing() == {}


def test_every_enforcing_hook_is_read_in_one_query(
    stash, make_stash, register_temporarily, team, django_assert_num_queries
):
    other = judge_stash(make_stash, register_temporarily, slug="other")
    processing.reject(one(judged(stash, "a?")), team["rita"])
    processing.approve(one(judged(other, "b?")), team["rita"])
    configs = list(HookConfig.objects.all())
    with django_assert_num_queries(1):
        found = processing.hook_precision(configs)
    assert sorted((f[30].confirmed, f[30].reversed) for f in found.values()) == [(0, 1), (1, 0)]
    with django_assert_num_queries(1):
        assert len(precision.for_enforcing()) == 2
