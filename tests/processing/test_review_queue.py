"""The team's review queue: its order, claims, next_for under concurrency, deadlines, four eyes and priorities."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from stash import hooks, processing
from stash.models import Content, Review
from tests.support.review import HoldByCode, held_since, hold, reviewer, team_stash
from tests.support.threads import concurrently

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_stash, register_temporarily):
    return team_stash(make_stash, register_temporarily)


@pytest.fixture
def alice(django_user_model):
    return reviewer(django_user_model, "alice")


@pytest.fixture
def bob(django_user_model):
    return reviewer(django_user_model, "bob")


def refreshed(item):
    item.refresh_from_db()
    return item


# --- order and priority -------------------------------------------------------------------------


def test_the_queue_puts_the_highest_priority_first_then_the_oldest_and_items_without_one_last(team):
    team.review_priority = 'reason_code == "urgent" ? 10.0 : double(payload.size)'
    team.save()
    old_plain = held_since(hold(team, "link", size=1), 5)
    Content.objects.filter(pk=old_plain.pk).update(priority=None)
    small = held_since(hold(team, "link", size=2), 3)
    urgent = held_since(hold(team, "urgent", size=0), 1)
    big = held_since(hold(team, "link", size=5), 2)
    assert [refreshed(i).priority for i in (small, urgent, big)] == [2.0, 10.0, 5.0]
    assert list(processing.held_items(team)) == [urgent, big, small, old_plain]
    assert processing.queue_position(refreshed(big)) == 2
    assert processing.next_held(team, refreshed(big)) == small
    assert processing.next_held(team, refreshed(small)) == old_plain


def test_a_priority_that_fails_to_evaluate_leaves_the_item_held_without_one(team, caplog):
    team.review_priority = "payload.size * 2.0"
    team.save()
    item = hold(team, "link", size="not a number")
    assert item.status == "held" and item.priority is None
    assert "Review priority of item" in caplog.text


def test_changing_the_priority_computes_it_again_for_the_held_items(team, django_capture_on_commit_callbacks):
    first, second = hold(team, "link", size=1), hold(team, "spam", size=3)
    assert first.priority is None and second.priority is None
    team.review_priority = 'reason_code == "spam" ? 1.0 : 7.0'
    with django_capture_on_commit_callbacks(execute=True):
        team.save()
    assert (refreshed(first).priority, refreshed(second).priority) == (7.0, 1.0)
    assert list(processing.held_items(team)) == [first, second]


# --- claims ---------------------------------------------------------------------------------------


def test_a_claim_keeps_others_off_until_it_expires_and_never_has_two_holders(team, alice, bob):
    item = hold(team)
    claimed = processing.claim(item.pk, alice)
    assert claimed.taken and claimed.content.claimed_by == alice
    assert claimed.until - timezone.now() > timedelta(minutes=9)
    refused = processing.claim(item.pk, bob)
    assert not refused.taken and refused.content.claimed_by == alice
    assert processing.claim(item.pk, alice).taken  # one's own claim is extended
    Content.objects.filter(pk=item.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert processing.claim(item.pk, bob).taken
    assert refreshed(item).claimed_by == bob


def test_release_ends_only_ones_own_claim(team, alice, bob):
    item = hold(team)
    processing.claim(item.pk, alice)
    assert not processing.release(item.pk, bob)
    assert refreshed(item).claimed_by == alice
    assert processing.release(item.pk, alice)
    assert refreshed(item).claimed_by is None


def test_next_for_skips_items_others_hold_and_claims_the_one_it_gives(team, alice, bob):
    first, second, third = (held_since(hold(team), hours) for hours in (3, 2, 1))
    assert processing.next_for(team, alice) == first
    assert processing.next_for(team, alice) == first  # what she holds comes back to her
    assert processing.next_for(team, bob) == second
    assert processing.next_for(team, bob, refreshed(second)) == third
    assert processing.next_for(team, alice, refreshed(first)) is None  # second and third are bob's
    assert refreshed(second).claimed_by == bob


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_asking_at_once_never_get_the_same_item(make_stash, register_temporarily, django_user_model):
    team = team_stash(make_stash, register_temporarily)
    items = {hold(team).pk for _ in range(12)}
    users = [reviewer(django_user_model, f"r{n}") for n in range(2)]
    got = [[], []]
    start = threading.Barrier(2)

    def work(seed):
        start.wait()
        after = None
        while True:
            item = processing.next_for(team, users[seed], after)
            if item is None:
                return None
            got[seed].append(item.pk)
            after = item

    assert concurrently(work, count=2) == []
    assert not set(got[0]) & set(got[1])
    assert set(got[0]) | set(got[1]) == items
    holders = dict(Content.objects.filter(pk__in=items).values_list("pk", "claimed_by"))
    # Each holds what it got (one may get them all, should the other start late).
    assert all(holders[pk] == users[seed].pk for seed in (0, 1) for pk in got[seed])


def test_deciding_an_item_someone_else_holds_is_refused_naming_them(team, alice, bob):
    item = hold(team)
    processing.claim(item.pk, alice)
    outcome = processing.decide(item.pk, "reject", bob)
    assert not outcome.applied and outcome.refused == processing.CLAIMED
    assert "being reviewed by alice until" in outcome.message
    assert refreshed(item).status == "held"
    assert processing.reject(Content.objects.filter(pk=item.pk), bob) == 0  # the bulk action too


def test_judging_again_an_item_someone_else_holds_is_refused_too(team, alice, bob):
    item = hold(team)
    processing.claim(item.pk, alice)
    outcome = processing.decide(item.pk, "judge", bob)
    assert not outcome.applied and outcome.refused == processing.CLAIMED
    item = refreshed(item)
    assert (item.status, item.claimed_by) == ("held", alice)
    assert processing.decide(item.pk, "judge", alice).applied  # the holder may
    assert refreshed(item).status == "pending"


def test_a_decision_ends_the_claim(team, alice):
    item = hold(team)
    processing.claim(item.pk, alice)
    assert processing.decide(item.pk, "approve", alice).applied
    item = refreshed(item)
    assert (item.status, item.claimed_by, item.claimed_until) == ("accepted", None, None)


# --- deadlines --------------------------------------------------------------------------------------


def test_items_held_longer_than_review_hours_are_overdue_and_counted(team, make_stash, register_temporarily):
    team.review_hours = 4
    team.save()
    late, recent = held_since(hold(team), 5), held_since(hold(team), 1)
    other = team_stash(make_stash, register_temporarily, slug="other")
    held_since(hold(other), 50)  # no deadline there
    assert processing.is_overdue(late, team) and not processing.is_overdue(recent, team)
    assert processing.overdue_counts() == {team.pk: 1}


# --- four eyes --------------------------------------------------------------------------------------


def test_four_eyes_needs_two_different_reviewers(team, alice, bob):
    team.four_eyes_reasons = ["csam"]
    team.save()
    item = hold(team, "csam")
    processing.claim(item.pk, alice)
    first = processing.decide(item.pk, "approve", alice, "looks fine")
    assert first.applied and first.first_approval
    item = refreshed(item)
    assert (item.status, item.claimed_by) == ("held", None)
    assert list(item.reviews.values_list("decision", "reviewer__username")) == [("approve1", "alice")]

    again = processing.decide(item.pk, "approve", alice)
    assert not again.applied and again.refused == processing.APPROVED_ALREADY
    assert "needs the approval of a second, different reviewer" in again.message
    assert refreshed(item).status == "held"

    second = processing.decide(item.pk, "approve", bob)
    assert second.applied and not second.first_approval
    item = refreshed(item)
    assert (item.status, item.reviewed_by) == ("accepted", bob)
    assert [r.decision for r in item.reviews.order_by("created_at", "pk")] == ["approve1", "approve"]


def test_other_reason_codes_and_rejections_need_one_reviewer(team, alice):
    team.four_eyes_reasons = ["csam"]
    team.save()
    plain, sensitive = hold(team, "link"), hold(team, "csam")
    assert processing.decide(plain.pk, "approve", alice).applied
    assert refreshed(plain).status == "accepted"
    assert processing.decide(sensitive.pk, "reject", alice).applied
    assert refreshed(sensitive).status == "rejected"


# --- expiry ------------------------------------------------------------------------------------------


def test_items_past_review_expire_hours_are_decided_automatically_once(team, alice):
    team.review_expire_hours, team.review_expire_action = 24, "reject"
    team.save()
    late, recent = held_since(hold(team), 30), held_since(hold(team), 2)
    processing.claim(late.pk, alice)  # a claim does not stop it
    report = processing.expire_reviews()
    assert report.decided == {team.pk: 1} and not report.more
    late = refreshed(late)
    assert (late.status, late.reason, late.reviewed_by, late.claimed_by) == (
        "rejected",
        "decided automatically after 24 hours",
        None,
        None,
    )
    review = late.reviews.get()
    assert (review.decision, review.reviewer, review.status) == (Review.Decision.EXPIRE, None, "rejected")
    assert refreshed(recent).status == "held"
    assert processing.expire_reviews().total == 0  # nothing twice


def test_expiry_approves_when_the_stash_says_so_and_is_bounded_per_pass(team):
    team.review_expire_hours, team.review_expire_action = 1, "approve"
    team.save()
    items = [held_since(hold(team), 3) for _ in range(3)]
    first = processing.expire_reviews(limit=2)
    assert first.total == 2 and first.more
    second = processing.expire_reviews(limit=2)
    assert second.total == 1 and not second.more
    assert {refreshed(item).status for item in items} == {"accepted"}


def test_the_expiry_task_is_scheduled_and_decides(team, settings):
    from stash import tasks

    assert settings.CELERY_BEAT_SCHEDULE["stash-expire-reviews"]["task"] == "stash.tasks.expire_reviews"
    team.review_expire_hours = 1
    team.save()
    item = held_since(hold(team), 2)
    tasks.expire_reviews()
    assert refreshed(item).status == "rejected"


def test_an_automatic_decision_reaches_the_sinks_as_a_reviewers_does(
    make_stash, register_temporarily, django_capture_on_commit_callbacks
):
    heard = []

    class Recorder(hooks.Sink):
        """Records the verdict events it hears."""

        def on_accept(self, item, result):
            heard.append(("accept", item.id, result.reason))

    register_temporarily("test_hold_by_code", HoldByCode)
    register_temporarily("test_expiry_recorder", Recorder)
    stash = make_stash(
        "expiring",
        hooks=[{"hook": "test_hold_by_code"}, {"hook": "test_expiry_recorder"}],
        review_expire_hours=2,
        review_expire_action="approve",
    )
    item = held_since(hold(stash), 3)
    with django_capture_on_commit_callbacks(execute=True):
        assert processing.expire_reviews().total == 1
    assert heard == [("accept", str(item.pk), "decided automatically after 2 hours")]


def test_an_import_or_a_restore_that_changes_the_priority_computes_it_again(team, django_capture_on_commit_callbacks):
    item = hold(team, "link", size=4)
    document = processing.export_document(team)
    document["stash"]["review_priority"] = "double(payload.size) * 2.0"
    with django_capture_on_commit_callbacks(execute=True):
        processing.import_document(team, document)
    assert refreshed(item).priority == 8.0
    team.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        processing.restore(team, team.config_version - 1)
    assert refreshed(item).priority is None
