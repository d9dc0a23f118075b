"""The statement policy editor in real headless Chromium: edit an entry, preview it on a real held
item, save; then the statement on the item's page. axe-core finds no critical or serious violation
on either page."""

import pytest
from playwright.sync_api import expect

from stash import processing
from stash.models import Content, Stash

from ..support.statements import moderated_stash
from .test_accessibility import FAILING_IMPACTS
from .test_admin import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)


def violations(page):
    from axe_playwright_python.sync_playwright import Axe

    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']}: "
        + ", ".join(" ".join(node["target"]) for node in violation["nodes"])
        for violation in Axe().run(page).response["violations"]
        if violation["impact"] in FAILING_IMPACTS
    ]


@pytest.fixture
def held(make_stash, register_temporarily, admin_user):
    stash = moderated_stash(make_stash, register_temporarily, slug="audit", name="Audit", appeal_days=14)
    item = Content.objects.create(stash=stash, payload={"text": "see http://1"}, submitted_by=admin_user)
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "held"
    return item


def test_edit_preview_and_save_a_policy_then_read_the_statement(logged_in, live_server, held):
    page = logged_in
    stash = held.stash
    page.goto(f"{live_server.url}/admin/stash/stash/{stash.pk}/change/")
    page.get_by_role("link", name="Statement policy").click()
    expect(page.locator("h1")).to_contain_text("Statement policy of Audit")

    link = page.locator("fieldset", has=page.locator("legend", has_text="Reason code link"))
    link.get_by_label("text").fill("We hold links for a person to check ({field}): {reason}.")
    link.get_by_label("ground").select_option("terms")
    link.get_by_label("reference").fill("Terms §7")
    page.locator("#preview-items").get_by_label(f"held · has a link · {str(held.pk)[:8]}").check()
    page.get_by_role("button", name="Preview (unsaved)").click()
    preview = page.locator("#statement-preview")
    expect(preview).to_contain_text("We hold links for a person to check (text): has a link.")
    expect(preview).to_contain_text("terms: Terms §7")
    assert Stash.objects.get(pk=stash.pk).statement_policy["codes"]["link"]["ground"] == "illegal"
    assert violations(page) == []
    page.screenshot(path=SCREENSHOTS / "statement-policy.png", full_page=True)

    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("The statement policy of Audit was saved.")
    saved = Stash.objects.get(pk=stash.pk).statement_policy["codes"]["link"]
    assert (saved["ground"], saved["reference"]) == ("terms", "Terms §7")

    # The item held before the change keeps the statement it was given; a new one gets the new text.
    item = Content.objects.create(stash=stash, payload={"text": "and http://2"}, submitted_by=held.submitted_by)
    processing.judge([item.pk])
    page.goto(f"{live_server.url}/c/{item.pk}/")
    statement = page.locator("#statement")
    expect(statement).to_contain_text("We hold links for a person to check (text): has a link.")
    expect(statement).to_contain_text("Held for review")
    expect(statement.get_by_role("link", name="Terms §7")).to_have_attribute("href", "https://example.com/terms#4")
    assert violations(page) == []
    page.screenshot(path=SCREENSHOTS / "statement.png", full_page=True)
