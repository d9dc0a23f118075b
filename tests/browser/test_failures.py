"""The failure store in real Chromium: from the stash page to a group of failures, its example's
trail, and a re-drive after the fix that accepts the group's items."""

import pytest
from playwright.sync_api import expect

from stash import hooks, processing
from stash.models import Content

from .test_admin import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)

BROKEN = {"on": True}


class Colours(hooks.Filter):
    """Raises on payloads naming a colour it does not know, while broken."""

    def filter(self, item):
        if BROKEN["on"] and "colour" in item.payload:
            raise KeyError(item.payload["colour"])
        return self.keep()


@pytest.fixture
def shop(make_stash, register_temporarily):
    BROKEN["on"] = True
    register_temporarily("test_colours", Colours)
    stash = make_stash(
        "shop",
        name="Shop",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "test_colours", "label": "Colours", "params": {}},
        ],
    )
    items = [Content.objects.create(stash=stash, payload={"text": f"mug {n}", "colour": "teal"}) for n in range(4)]
    items.append(Content.objects.create(stash=stash, payload={"text": "plain mug"}))
    processing.judge([item.pk for item in items])
    yield stash
    BROKEN["on"] = True


def test_an_operator_finds_a_group_of_failures_and_redrives_it_after_the_fix(logged_in, live_server, shop):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{shop.pk}/change/")
    page.click("#pipeline-tools >> text=Failures")

    row = page.locator("#failure-groups tr.stash-failure-group")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Colours")
    expect(row).to_contain_text("KeyError")
    expect(row.locator("td.stash-num").first).to_have_text("4")
    page.screenshot(path=SCREENSHOTS / "failures.png", full_page=True)

    row.locator("a").first.click()
    expect(page.locator("#failure-count")).to_contain_text("4 failures · 4 items")
    expect(page.locator(".stash-trail").last).to_contain_text("Colours: KeyError: 'teal'")

    BROKEN["on"] = False  # the fix is deployed
    page.click("#redrive input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("4 items sent to be judged again.")
    expect(page.locator("#redrive-outcome")).to_contain_text("not judged yet: 4")

    processing.judge(list(Content.objects.filter(stash=shop, status="pending").values_list("pk", flat=True)))
    page.reload()
    expect(page.locator("#redrive-outcome")).to_contain_text("accepted: 4")
    expect(page.locator("#redrive-outcome")).to_contain_text("still failing: 0")
    expect(page.locator(".stash-trail").last).to_contain_text("Colours: KeyError: 'teal'")  # the failed run still
    page.screenshot(path=SCREENSHOTS / "failure-group.png", full_page=True)
    assert set(Content.objects.filter(stash=shop).values_list("status", flat=True)) == {"accepted"}
