"""The review queue for a team in real headless Chromium: two reviewers in two browser contexts, four
eyes, the queue's priority order, the overdue badge, and axe-core over the pages they use."""

import pytest
from playwright.sync_api import expect

from stash.models import Content, Stash

from ..support.review import held_since, hold, reviewer, team_stash
from .test_accessibility import audit
from .test_admin import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def team(make_stash, register_temporarily):
    return team_stash(make_stash, register_temporarily)


@pytest.fixture
def sign_in(browser, live_server, django_user_model):
    """``sign_in("alice")``: a page in a browser context of its own, logged in as a new reviewer."""
    contexts = []

    def open_as(username):
        reviewer(django_user_model, username)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", "pass-word-123")
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")
        return page

    yield open_as
    for context in contexts:
        context.close()


def review_url(live_server, stash):
    return f"{live_server.url}/admin/stash/stash/{stash.pk}/review/"


def shown(page):
    """The id of the item the review page shows."""
    return page.locator("#review-item").get_attribute("data-item")


def test_two_reviewers_never_get_the_same_item_from_next(sign_in, live_server, team):
    one, two, three, four = (str(held_since(hold(team), hours).pk) for hours in (4, 3, 2, 1))
    alice, bob = sign_in("alice"), sign_in("bob")
    alice.goto(review_url(live_server, team))
    bob.goto(review_url(live_server, team))
    assert (shown(alice), shown(bob)) == (one, two)
    expect(alice.locator("#review-claim")).to_contain_text("You are reviewing this item until")
    expect(bob.locator(f'#review-queue tr[data-item="{one}"]')).to_contain_text("alice until")

    # "next" (n) lets the item go and takes the next one nobody else holds.
    alice.keyboard.press("n")
    expect(alice.locator("#review-item")).to_have_attribute("data-item", three)
    bob.keyboard.press("n")
    expect(bob.locator("#review-item")).to_have_attribute("data-item", four)
    alice.keyboard.press("n")
    expect(alice.locator("#review-end")).to_be_visible()  # four is bob's
    holders = dict(Content.objects.values_list("pk", "claimed_by__username"))
    assert {str(pk): who for pk, who in holders.items()} == {one: None, two: None, three: None, four: "bob"}


def test_four_eyes_needs_two_people(sign_in, live_server, team):
    Stash.objects.filter(pk=team.pk).update(four_eyes_reasons=["csam"])
    item = hold(team, "csam")
    alice = sign_in("alice")
    alice.goto(review_url(live_server, team))
    expect(alice.locator("#review-four-eyes")).to_contain_text("0 of 2 approvals")
    alice.get_by_role("button", name="Approve").click()
    expect(alice.locator(".messagelist")).to_contain_text("needs a second approval by another reviewer")
    item.refresh_from_db()
    assert item.status == "held"

    bob = sign_in("bob")
    bob.goto(review_url(live_server, team))
    expect(bob.locator("#review-four-eyes")).to_contain_text("1 of 2 approvals: alice")
    bob.keyboard.press("a")
    expect(bob.locator(".messagelist")).to_contain_text(f"Approved item {str(item.pk)[:8]}.")
    item.refresh_from_db()
    assert (item.status, item.reviewed_by.username) == ("accepted", "bob")


def test_the_queue_comes_in_priority_order_with_an_overdue_badge(sign_in, live_server, team):
    Stash.objects.filter(pk=team.pk).update(review_hours=2)
    team.refresh_from_db()
    team.review_priority = 'reason_code == "urgent" ? 9.0 : 1.0'
    team.save()
    late = held_since(hold(team, "link"), 5)
    urgent = held_since(hold(team, "urgent"), 1)
    alice = sign_in("alice")
    alice.goto(review_url(live_server, team))
    assert shown(alice) == str(urgent.pk)
    rows = alice.locator("#review-queue tbody tr")
    expect(rows).to_have_count(2)
    assert [rows.nth(n).get_attribute("data-item") for n in range(2)] == [str(urgent.pk), str(late.pk)]
    badge = rows.nth(1).locator(".stash-badge-overdue")
    expect(badge).to_have_text("Overdue")
    assert badge.evaluate("el => getComputedStyle(el).color") == "rgb(161, 38, 27)"
    expect(alice.locator("#review-position")).to_contain_text("1 overdue")
    alice.screenshot(path=SCREENSHOTS / "review-team.png", full_page=True)

    alice.goto(f"{live_server.url}/admin/")
    expect(alice.locator("#awaiting-review")).to_contain_text("2 held items")
    expect(alice.locator("#awaiting-review .stash-badge-overdue")).to_have_text("1 overdue")


def test_axe_finds_no_serious_violation_on_the_team_review_pages(sign_in, live_server, team):
    Stash.objects.filter(pk=team.pk).update(review_hours=1, four_eyes_reasons=["csam"])
    held_since(hold(team, "csam"), 3)
    held_since(hold(team, "link"), 2)
    bob = sign_in("bob")
    bob.goto(review_url(live_server, team))  # bob holds the first item: alice sees his claim
    alice = sign_in("alice")
    failures = []
    for url in (review_url(live_server, team), f"{live_server.url}/admin/"):
        lines = audit(alice, url)
        if lines:
            failures.append(f"{url}:\n" + "\n".join(lines))
    assert not failures, "\n".join(failures)
