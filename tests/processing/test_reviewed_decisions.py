"""Judging items again leaves people's decisions alone unless the operator includes them: the admin's
replay page, the items list's action and ``stash_reprocess``; an included decision is kept in the
item's history (``Review``) and its reviewer is no longer shown as the decider."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from stash import processing
from stash.models import Content, HookConfig, Review

from ..admin.test_admin import change_url, judge
from ..admin.test_admin_content import HoldLinks

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash, register_temporarily):
    register_temporarily("test_hold_links", HoldLinks)
    return make_stash("audit", hooks=[{"hook": "test_hold_links", "label": "Links"}])


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="pw")


@pytest.fixture
def decided(audit, alice, broker):
    """Two held items: alice rejected ``rejected`` in review; nobody decided ``open``. Then the hold
    is switched off: judged again, both would be accepted."""
    rejected, open_ = judge(audit, text="http://scam"), judge(audit, text="http://fine")
    assert (rejected.status, open_.status) == ("held", "held")
    assert processing.reject(Content.objects.filter(pk=rejected.pk), alice, "a scam link") == 1
    HookConfig.objects.filter(stash=audit).update(enabled=False)
    return {"rejected": rejected, "open": open_}


def state(item):
    item = Content.objects.select_related("reviewed_by").get(pk=item.pk)
    return item.status, item.reviewed_by.username if item.reviewed_by else None, item.review_note


def history(item):
    return [
        (review.decision, review.status, review.reviewer.username, review.note, review.replaced_at is not None)
        for review in Review.objects.filter(content=item)
    ]


def stands(item):
    """``item`` is still rejected, decided by alice, with her note, and its history says so."""
    assert state(item) == ("rejected", "alice", "a scam link")
    assert history(item) == [("reject", "rejected", "alice", "a scam link", False)]


def replaced(item):
    """``item`` was judged again and accepted; alice's rejection is history, no longer the decider."""
    processing.judge([item.pk])
    assert state(item) == ("accepted", None, "")
    assert Content.objects.get(pk=item.pk).overturned is False
    assert history(item) == [("reject", "rejected", "alice", "a scam link", True)]


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


# --- the review itself is kept ------------------------------------------------------------------


def test_every_review_is_kept_in_the_items_history(audit, alice):
    held = judge(audit, text="http://a")
    processing.approve(Content.objects.filter(pk=held.pk), alice, "fine after all")
    processing.overturn(Content.objects.filter(pk=held.pk), alice, "no, it is not")
    assert history(held) == [
        ("overturn", "rejected", "alice", "no, it is not", False),
        ("approve", "accepted", "alice", "fine after all", False),
    ]


def test_the_items_page_lists_its_decisions_by_people(admin_client, decided):
    page = admin_client.get(change_url(decided["rejected"])).content.decode()
    assert "Decisions by people" in page
    table = page[page.index('class="stash-trail stash-reviews"') :]
    table = table[: table.index("</table>")]
    assert "alice" in table and "reject" in table and "a scam link" in table


# --- the replay page ----------------------------------------------------------------------------


def replay_url(stash):
    return reverse("admin:stash_stash_replay", args=[stash.pk])


def test_replay_offers_to_include_decisions_by_people_naming_them(admin_client, audit, decided):
    page = admin_client.post(replay_url(audit), {"last_n": 10}).content.decode()
    assert page.count('<input type="hidden" name="ids"') == 2
    assert (
        '<input type="checkbox" name="include_reviewed"> Also judge again 1 item decided by people (alice): '
        "their decision will be replaced."
    ) in page


def test_replays_judge_again_leaves_a_reviewers_decision_alone(admin_client, audit, decided):
    ids = [str(item.pk) for item in decided.values()]
    response = admin_client.post(
        replay_url(audit), {"_judge_again": "Judge these items again", "ids": ids}, follow=True
    )
    assert messages_of(response) == [
        "1 item sent to be judged again.",
        "1 item was left out: people decided it (alice), and their decision stands.",
    ]
    stands(decided["rejected"])
    assert state(decided["open"])[0] == "pending"


def test_replays_judge_again_replaces_a_reviewers_decision_when_included(admin_client, audit, decided):
    ids = [str(item.pk) for item in decided.values()]
    response = admin_client.post(
        replay_url(audit),
        {"_judge_again": "Judge these items again", "ids": ids, "include_reviewed": "on"},
        follow=True,
    )
    assert messages_of(response) == [
        "2 items sent to be judged again.",
        "1 decision by people (alice) was replaced; the item's history keeps it.",
    ]
    replaced(decided["rejected"])


# --- the items list's action --------------------------------------------------------------------


CHANGELIST = "admin:stash_content_changelist"


def act(client, items, **extra):
    return client.post(
        reverse(CHANGELIST), {"action": "reprocess", "_selected_action": [i.pk for i in items], **extra}, follow=True
    )


def test_the_action_asks_before_judging_again_items_decided_by_people(admin_client, decided):
    response = act(admin_client, decided.values())
    page = response.content.decode()
    assert "1 of the selected items was decided in review (by alice): it is left out unless you include it." in page
    assert (
        '<input type="checkbox" name="include_reviewed"> Also judge again 1 item decided by people (alice): '
        "their decision will be replaced."
    ) in page
    assert [state(item)[0] for item in decided.values()] == ["rejected", "held"]  # asking changes nothing
    stands(decided["rejected"])


def test_the_action_leaves_a_reviewers_decision_alone_unless_included(admin_client, decided):
    response = act(admin_client, decided.values(), _confirmed="1")
    assert messages_of(response) == [
        "1 item sent to be judged again.",
        "1 item was left out: people decided it (alice), and their decision stands.",
    ]
    stands(decided["rejected"])
    assert state(decided["open"])[0] == "pending"


def test_the_action_replaces_a_reviewers_decision_when_included(admin_client, decided):
    response = act(admin_client, [decided["rejected"]], _confirmed="1", include_reviewed="on")
    assert messages_of(response) == [
        "1 item sent to be judged again.",
        "1 decision by people (alice) was replaced; the item's history keeps it.",
    ]
    replaced(decided["rejected"])
    page = admin_client.get(change_url(decided["rejected"])).content.decode()
    assert "judged again by the hooks" in page


def test_the_action_asks_nothing_when_no_person_decided(admin_client, decided):
    response = act(admin_client, [decided["open"]])
    assert messages_of(response) == ["1 item sent to be judged again."]
    assert state(decided["open"])[0] == "pending"


# --- stash_reprocess ----------------------------------------------------------------------------


def run(*args):
    out = io.StringIO()
    call_command("stash_reprocess", *args, stdout=out)
    return out.getvalue()


def test_the_command_leaves_a_reviewers_decision_alone(decided):
    out = run("--stash", "audit")
    assert out == (
        "1 item(s) sent to be judged again.\n"
        "1 item(s) left out: decided by people (alice). --include-reviewed judges them again too, "
        "replacing their decisions.\n"
    )
    stands(decided["rejected"])
    assert state(decided["open"])[0] == "pending"


def test_the_command_replaces_a_reviewers_decision_with_include_reviewed(decided):
    out = run(str(decided["rejected"].pk), "--include-reviewed")
    assert out == (
        "1 item(s) sent to be judged again.\n"
        "1 of them decided by people (alice): their decisions are replaced, kept in each item's "
        "history.\n"
    )
    replaced(decided["rejected"])
