"""The review queue in real headless Chromium: from the admin index's panel, approve, reject,
overturn, skip and judge again, with the mouse and with the keyboard."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from stash import hooks, processing
from stash.models import Content

from .test_admin import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)


class HoldLinks(hooks.Filter):
    """Hold content with a link for a person to look at."""

    def filter(self, item):
        return self.hold("has a link", "link") if "http" in item.payload.get("text", "") else self.keep()


@pytest.fixture
def held(make_stash, register_temporarily):
    """Five held items of the stash Audit, "http://1" the oldest."""
    register_temporarily("test_hold_links", HoldLinks)
    audit = make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
            {"hook": "test_hold_links", "label": "Links"},
        ],
    )
    start = timezone.now() - timedelta(hours=1)
    items = []
    for n in range(1, 6):
        item = Content.objects.create(stash=audit, payload={"text": f"see http://{n}", "data": {"n": n}})
        Content.objects.filter(pk=item.pk).update(created_at=start + timedelta(minutes=n))
        processing.judge([item.pk])
        items.append(item)
    return items


def status(item):
    item.refresh_from_db()
    return item.status


def expect_item(page, n, of=None):
    expect(page.locator("#review-item .stash-text")).to_have_text(f"see http://{n}")
    if of:
        expect(page.locator("#review-position")).to_contain_text(of)


def test_reviewing_held_items_with_the_mouse_and_the_keyboard(logged_in, live_server, held, admin_user):
    page = logged_in
    one, two, three, four, five = held
    page.goto(f"{live_server.url}/admin/")
    panel = page.locator("#awaiting-review")
    expect(panel).to_contain_text("Awaiting review")
    expect(panel).to_contain_text("5 held items")
    panel.get_by_role("link", name="Audit").click()

    # Oldest first; a decision with a note, by a click.
    expect_item(page, 1, "Item 1 of 5 awaiting review in Audit")
    expect(page.locator(".stash-trail")).to_contain_text("has a link")
    page.screenshot(path=SCREENSHOTS / "review.png", full_page=True)
    page.fill("#id_note", "a known site")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".messagelist")).to_have_text(f"Approved item {str(one.pk)[:8]}.")
    expect_item(page, 2, "Item 1 of 4")
    assert (status(one), one.reviewed_by, one.review_note) == ("accepted", admin_user, "a known site")

    # A single key decides; typed into the note, the same key is just a letter.
    page.keyboard.press("r")
    expect(page.locator(".messagelist")).to_have_text(f"Rejected item {str(two.pk)[:8]}.")
    expect_item(page, 3)
    assert status(two) == "rejected"
    page.click("#id_note")
    page.keyboard.type("ok really")
    expect(page.locator("#id_note")).to_have_value("ok really")
    expect_item(page, 3)
    assert status(three) == "held"
    page.keyboard.press("Escape")
    page.keyboard.press("o")
    expect(page.locator(".messagelist")).to_have_text(
        f"Overturned the verdict on item {str(three.pk)[:8]}: it is accepted now."
    )
    three.refresh_from_db()
    assert (three.status, three.overturned, three.review_note) == ("accepted", True, "ok really")
    assert three.decided_by.overturned_count == 1

    # Skip without deciding, then judge the next again.
    expect_item(page, 4)
    page.keyboard.press("n")
    expect_item(page, 5, "Item 2 of 2")
    page.get_by_role("button", name="Judge again").click()
    expect(page.locator(".messagelist")).to_have_text(f"Sent item {str(five.pk)[:8]} to be judged again.")
    assert status(five) == "pending" and status(four) == "held"

    # Past the last one, back to the skipped one; the keyboard's way: Tab from the note to Approve.
    expect(page.locator("#review-end")).to_contain_text("1 item still awaits review")
    page.get_by_role("link", name="start again from the oldest").click()
    expect_item(page, 4, "Item 1 of 1")
    page.click("#id_note")
    page.keyboard.press("Tab")
    approve = page.get_by_role("button", name="Approve")
    expect(approve).to_be_focused()
    outline = approve.evaluate("button => getComputedStyle(button).outlineStyle")
    assert outline == "solid"  # the focus is visible
    page.keyboard.press("Enter")
    expect(page.locator("#review-empty")).to_have_text("Nothing awaiting review.")
    assert status(four) == "accepted"

    page.goto(f"{live_server.url}/admin/")
    expect(page.locator("#awaiting-review")).to_contain_text("Nothing awaiting review.")


def axe_violations(page):
    """Every axe-core violation on the page, of any impact, as ``rule: targets`` lines."""
    from axe_playwright_python.sync_playwright import Axe

    return [
        f"{violation['id']} ({violation['impact']}): "
        + ", ".join(" ".join(node["target"]) for node in violation["nodes"])
        for violation in Axe().run(page).response["violations"]
    ]


def test_the_review_pages_have_no_accessibility_violation_and_say_what_each_decision_does(logged_in, live_server, held):
    page = logged_in
    page.goto(f"{live_server.url}/admin/")
    oldest = page.locator("#awaiting-review")
    expect(oldest).to_contain_text("oldest: under 1 min")
    page.get_by_role("link", name="Review every stash in one queue").click()
    expect(page.locator("h1")).to_have_text("Review all stashes")
    expect_item(page, 1, "Item 1 of 5 awaiting review in all the stashes you may review")
    assert axe_violations(page) == []

    # The words beside the buttons, not a tooltip: and each button is described by them.
    overturn = page.get_by_role("button", name="Overturn")
    expect(overturn).to_have_accessible_description(
        "Accepts the item, and counts it against the hook that held it: one more false positive "
        "(overturned) on the hook's counters. Use it when the hook should not have held the item."
    )
    expect(page.locator("#decide-meanings")).to_be_visible()
    expect(page.locator("#decide-precision")).to_contain_text("Precision of Links over 30 days")

    page.goto(f"{live_server.url}/admin/stash/stash/{held[0].stash_id}/review/")
    expect_item(page, 1, "Item 1 of 5 awaiting review in Audit")
    assert axe_violations(page) == []
    # A link inside a sentence is underlined, not told apart by colour alone.
    hook_link = page.locator(".stash-review-reason a")
    assert "underline" in hook_link.evaluate("link => getComputedStyle(link).textDecorationLine")

    # The item's whole id, copied from its title.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    short = str(held[0].pk)[:8]
    page.get_by_role("button", name=f"Copy the full id of item {short}").click()
    expect(page.get_by_role("status")).to_have_text(f"Copied the full id of item {short}.")
    assert page.evaluate("navigator.clipboard.readText()") == str(held[0].pk)


def test_the_items_list_copies_an_items_whole_id_from_the_keyboard(logged_in, live_server, held):
    page = logged_in
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    oldest = held[0]
    short = str(oldest.pk)[:8]
    page.goto(f"{live_server.url}/admin/stash/content/?q={short}")  # the 8 characters find the item
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
    named = page.get_by_role("button", name=f"Copy the full id of item {short}")
    expect(named).to_have_count(1)
    copy = page.locator(f'button[data-copy="{oldest.pk}"]')
    # The keyboard's way along the row: its checkbox, the id's link, then the button.
    page.locator("#result_list tbody input.action-select").focus()
    page.keyboard.press("Tab")
    expect(page.locator("#result_list tbody th a")).to_be_focused()
    page.keyboard.press("Tab")
    expect(copy).to_be_focused()
    page.keyboard.press("Enter")
    expect(copy).to_have_text(f"Copied the full id of item {short}")
    expect(page.get_by_role("status")).to_have_text(f"Copied the full id of item {short}.")
    assert page.evaluate("navigator.clipboard.readText()") == str(oldest.pk)
    expect(copy).to_have_text(f"Copy the full id of item {short}")  # the button says Copy again
    assert axe_violations(page) == []
