"""Judging many items again, followed in real Chromium: the list's action links to the stash's judging,
whose counts move as a worker judges the items, without a reload."""

import pytest
from playwright.sync_api import expect

from stash import processing
from stash.models import Content

from .test_accessibility import audit as accessibility_violations

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audit(make_stash, broker):
    stash = make_stash("audit", name="Audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    made = [processing.submit(stash, {"text": f"item {n}"})[0] for n in range(5)]
    processing.judge([item.pk for item in made])
    return stash


def test_the_judging_page_counts_the_items_as_they_are_judged(logged_in, live_server, audit, broker, settings):
    settings.STASH_BATCH_SIZE = 2
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/content/?stash__id__exact={audit.pk}")
    page.check("#action-toggle")
    page.select_option("select[name=action]", "reprocess")
    broker.messages.clear()
    page.click("button[name=index]")
    messages = page.locator(".messagelist li")
    expect(messages.nth(0)).to_have_text("5 items sent to be judged again.")
    expect(messages.nth(1)).to_contain_text(
        "They are judged over a while, a batch at a time. Follow their judging: Audit."
    )

    page.click(".messagelist a:text-is('Audit')")
    expect(page.locator("h1")).to_have_text("Judging Audit again")
    counts = page.locator("#judging-counts")
    expect(counts).to_have_attribute("aria-live", "polite")
    expect(counts).to_contain_text("0 of 5 items judged, 5 waiting, ")
    bar = page.locator("progress#judging-bar")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("0", "5")
    assert accessibility_violations(page, page.url) == []
    page.evaluate("window.notReloaded = true")

    # A worker takes the messages the action sent: the first, then the rest.
    sent = list(broker.ids)
    assert len(sent) == 5
    processing.judge(sent[:2])
    expect(counts).to_contain_text("2 of 5 items judged, 3 waiting, ")
    processing.judge(sent[2:])
    expect(counts).to_contain_text("5 of 5 items judged, 0 waiting, ")
    expect(counts).to_contain_text(" items/s.")
    assert bar.evaluate("bar => [bar.value, bar.max]") == [5, 5]
    assert page.evaluate("window.notReloaded") is True
    assert set(Content.objects.values_list("status", flat=True)) == {"accepted"}
