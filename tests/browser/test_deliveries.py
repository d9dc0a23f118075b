"""A sink's deliveries on the item's admin page and on the review page, and the hook list's statistics at 1280 px,
in real Chromium."""

import pytest
from playwright.sync_api import expect

from stash import processing, tasks
from stash.models import Content

from ..hooks.test_webhook import LOOPBACK, Receiver

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "s3cret-s3cret-s3cret-s3cret"


@pytest.fixture
def receiver():
    server = Receiver([503, 200])  # fails once, then takes it
    yield server
    server.close()


@pytest.fixture
def judged(make_stash, receiver, settings):
    """An item judged by a stash whose webhook sits between its filters, delivered on the second try."""
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = LOOPBACK
    stash = make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": {"url": receiver.url(), "secret": SECRET}},
            {"hook": "keyword_blocklist", "label": "Blocklist", "params": {"words": ["spam"]}},
        ],
    )
    content = Content.objects.create(stash=stash, payload={"text": "hello"})
    [delivery] = processing.judge([content.pk]).deliveries
    assert tasks.deliver_sink.apply(args=delivery.args).state == "SUCCESS"
    return content


def test_the_items_page_shows_its_sinks_delivery_after_the_numbered_trail(logged_in, live_server, judged, receiver):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/content/{judged.pk}/change/")

    steps = page.locator("table.stash-trail:not(.stash-deliveries) tbody tr")
    expect(steps).to_have_count(2)
    expect(steps.nth(0).locator("td").first).to_have_text("1")
    expect(steps.nth(1).locator("td").nth(1)).to_contain_text("Blocklist")
    expect(steps.nth(1).locator("td").first).to_have_text("2")  # the sink between them takes no number

    deliveries = page.locator("table.stash-deliveries")
    expect(deliveries.locator("caption")).to_have_text("After the verdict: its sinks' deliveries")
    row = deliveries.locator("tbody tr")
    expect(row).to_have_count(1)
    cells = row.locator("td")
    expect(cells.nth(0)).to_have_text("Notify")
    expect(cells.nth(1)).to_have_text("on_accept")
    expect(cells.nth(2)).to_have_text("delivered")
    expect(cells.nth(3)).to_have_text("2")
    expect(cells.nth(4)).to_have_text(f"WebhookError: POST {receiver.url()} answered 503 Service Unavailable")
    expect(cells.nth(5)).to_contain_text("delivered ")
    assert len(receiver.requests) == 2


@pytest.fixture
def held(make_stash, receiver, settings):
    """An item held for review by a stash whose webhook told of the hold, on the second try."""
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = LOOPBACK
    stash = make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": {"url": receiver.url(), "secret": SECRET}},
            {
                "hook": "condition",
                "label": "Long ones wait",
                "params": {"expression": "size(payload.text) > 10", "action": "hold"},
            },
        ],
    )
    content = Content.objects.create(stash=stash, payload={"text": "see http://example.com"})
    [delivery] = processing.judge([content.pk]).deliveries
    assert tasks.deliver_sink.apply(args=delivery.args).state == "SUCCESS"
    content.refresh_from_db()
    assert content.status == "held"
    return content


def test_the_review_page_shows_the_held_items_sink_delivery_under_its_trail(logged_in, live_server, held):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{held.stash_id}/review/")
    item = page.locator("#review-item")
    expect(item.locator("table.stash-trail:not(.stash-deliveries) tbody tr")).to_have_count(2)
    deliveries = item.locator("table.stash-deliveries")
    expect(deliveries.locator("caption")).to_have_text("After the verdict: its sinks' deliveries")
    cells = deliveries.locator("tbody tr td")
    expect(cells.nth(0)).to_have_text("Notify")
    expect(cells.nth(1)).to_have_text("on_hold")
    expect(cells.nth(2)).to_have_text("delivered")
    expect(cells.nth(3)).to_have_text("2")
    expect(cells.nth(0).locator("a")).to_have_attribute(
        "href", f"/admin/stash/hookconfig/{held.stash.hooks.get(label='Notify').pk}/change/"
    )


def test_the_hook_lists_statistics_fit_a_1280_px_window(logged_in, live_server, judged):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/hookconfig/")

    expect(page.locator("td.field-statistics", has_text="1 delivered · 0 failed · 0 retrying")).to_have_count(1)
    expect(page.locator("td.field-statistics", has_text="1 run · 1 kept · 0 dropped · 0 held")).to_have_count(2)
    sticking_out = page.evaluate("""() => {
        const cells = [...document.querySelectorAll('td.field-statistics')];
        const list = document.querySelector('#changelist-form .results').getBoundingClientRect();
        return {page: document.documentElement.scrollWidth - window.innerWidth,
                cells: Math.max(...cells.map(c => c.getBoundingClientRect().right - list.right)),
                clipped: cells.some(c => c.scrollWidth > c.clientWidth)};
    }""")
    assert sticking_out["page"] <= 0 and sticking_out["cells"] <= 0 and not sticking_out["clipped"], sticking_out
