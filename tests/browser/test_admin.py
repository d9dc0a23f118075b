"""The hook admin in real headless Chromium: pick and configure, drag into order, toggle, simulate."""

import os
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from stash import processing
from stash.models import Content, HookConfig

from ..support.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# `make screenshots` writes them to docs/img/ (shown in the README); a plain test run keeps the
# tracked images untouched and writes under the run's var directory.
SCREENSHOTS = Path(os.environ.get("STASH_SCREENSHOTS") or settings.VAR_DIR / "screenshots")
SCREENSHOTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        description="Text required, no spam, 64 KB at most.",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {
                "hook": "keyword_blocklist",
                "label": "No spam",
                "params": {"words": ["spam", "free money"], "whole_word": True},
            },
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}},
        ],
    )


def labels(stash):
    return list(stash.hooks.in_order().values_list("label", flat=True))


def judge(stash, payload):
    item = Content.objects.create(stash=stash, payload=payload)
    processing.judge([item.pk])
    return item.runs.get()


def drag(page, source, target):
    """Drag ``source`` onto the top edge of ``target`` with real mouse moves, as a person does."""
    start, end = source.bounding_box(), target.bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2 - 5, steps=3)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + 2, steps=15)
    # A person's hand rests a moment before letting go: the list has moved the row under it by then,
    # however busy the browser is.
    page.wait_for_timeout(300)
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + 1)
    page.mouse.up()


def test_adding_a_hook_shows_its_schema_refuses_bad_params_and_saves_good_ones(logged_in, live_server, audit):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/hookconfig/add/")
    page.select_option("#id_stash", str(audit.pk))
    page.select_option("#id_hook", "keyword_blocklist")
    # Picking the hook fills its defaults and shows what its params mean.
    expect(page.locator("#id_params")).to_have_value('{\n  "whole_word": false\n}')
    help_box = page.locator(".stash-hook-help")
    expect(page.locator("#id_hook option:checked")).to_have_text(
        "keyword_blocklist (filter): Drop content whose text contains a blocked word or phrase (case-insensitive)."
    )
    expect(help_box).to_contain_text("words (list of string, required)")
    page.fill("#id_label", "No scam")
    page.click("input[name=_save]")
    expect(page.locator(".errornote")).to_be_visible()
    expect(page.locator(".field-params .errorlist")).to_contain_text("'words' is a required property")
    assert audit.hooks.count() == 3

    page.fill("#id_params", '{"words": ["scam"], "whole_word": true}')
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    assert labels(audit) == ["Needs text", "No spam", "At most 64 KB", "No scam"]
    assert judge(audit, {"text": "a scam"}).reason == "contains blocked word 'scam' in text"


def test_dragging_a_hook_above_another_changes_the_order_the_next_item_is_judged_in(logged_in, live_server, audit):
    page = logged_in
    for text in ("hello", "spam, spam", "free money"):
        judge(audit, {"text": text})
    HookConfig.objects.create(
        stash=audit, hook="require_fields", label="Needs a title", enabled=False, params={"fields": ["title"]}
    )
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    rows = page.locator("#hooks-group tr.has_original")
    expect(rows).to_have_count(4)
    # Disabled: said by a badge, the row in full colour (a faded row fails contrast).
    expect(rows.nth(3).locator(".stash-badge-disabled")).to_have_text("disabled")
    expect(rows.nth(3).locator(".stash-badge-disabled")).to_be_visible()
    expect(rows.nth(0).locator(".stash-badge-disabled")).to_be_hidden()
    expect(rows.nth(3).locator("td.field-label")).to_have_css("opacity", "1")
    page.screenshot(path=SCREENSHOTS / "stash-admin.png", full_page=True)

    rows.nth(2).locator("td.original p").drag_to(rows.nth(0).locator("td.original p"))
    expect(page.locator("#id_hooks-2-position")).to_have_value("1")
    expect(rows.nth(0).locator(".stash-hook-number")).to_have_text("1.")  # the captions follow the drag
    expect(rows.nth(0).locator(".stash-hook-title")).to_have_text("At most 64 KB")
    expect(rows.nth(1).locator(".stash-hook-number")).to_have_text("2.")
    expect(page.locator(".stash-order-unsaved")).to_be_visible()
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert labels(audit) == ["At most 64 KB", "Needs text", "No spam", "Needs a title"]
    assert list(audit.hooks.in_order().values_list("position", flat=True)) == [1, 2, 3, 4]
    trail = judge(audit, {"text": "spam"}).trail
    assert [entry["label"] for entry in trail] == ["At most 64 KB", "Needs text", "No spam"]


def test_dragging_in_the_hooks_list_of_a_stash_reorders_at_once(logged_in, live_server, audit):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/hookconfig/?stash__id__exact={audit.pk}")
    handles = page.locator("#result_list div.drag.handle")
    expect(handles).to_have_count(3)
    drag(page, handles.nth(1), handles.nth(0))
    wait_for(lambda: labels(audit)[0] == "No spam", timeout=15, message="the drag to reach the database")
    assert labels(audit) == ["No spam", "Needs text", "At most 64 KB"]
    assert list(audit.hooks.in_order().values_list("position", flat=True)) == [1, 2, 3]
    # Said, and shown: the "#" column holds the new positions without a reload.
    expect(page.get_by_role("status")).to_have_text("Order saved: No spam is now 1 of 3.")
    rows = page.locator("#result_list tbody tr")
    expect(rows.locator(".field-title")).to_have_text(["No spam", "Needs text", "At most 64 KB"], use_inner_text=True)
    expect(rows.locator(".field-order")).to_have_text(["1", "2", "3"])


def test_toggling_enabled_in_the_list(logged_in, live_server, audit):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/hookconfig/?stash__id__exact={audit.pk}")
    row = page.locator("#result_list tbody tr", has_text="No spam")
    title = row.locator(".field-title a")
    badge = "link => getComputedStyle(link, '::after').content"
    assert title.evaluate(badge) == "none"
    row.locator("input[name$=-enabled]").uncheck()
    assert title.evaluate(badge) == '"disabled"'  # marked before saving, in full colour
    expect(row.locator(".field-title")).to_have_css("opacity", "1")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("1 hook config was changed successfully.")
    assert not HookConfig.objects.get(label="No spam").enabled
    row = page.locator("#result_list tbody tr", has_text="No spam")
    expect(row.locator(".stash-badge-disabled")).to_have_text("disabled")  # saved: a badge of its own
    assert row.locator(".field-title a").evaluate(badge) == "none"
    assert [entry["label"] for entry in judge(audit, {"text": "spam"}).trail] == ["Needs text", "At most 64 KB"]


def test_a_simulation_shows_the_trail_and_saves_nothing(logged_in, live_server, audit):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    page.click("text=Simulate")
    page.fill("#id_payload", '{\n  "text": "get free money now",\n  "data": {"probability": 0.93}\n}')
    expect(page.locator("#id_verbose")).to_be_checked()  # verbose by default: every hook runs
    page.click("input[type=submit]")
    result = page.locator("#simulation")
    expect(result).to_contain_text("rejected — contains blocked word 'free money' in text")
    rows = result.locator("table.stash-trail tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("Needs text")
    expect(rows.nth(0)).to_contain_text("kept")
    expect(rows.nth(1)).to_contain_text("dropped")
    expect(rows.nth(1)).to_contain_text("decided the run")
    expect(rows.nth(2)).to_contain_text("At most 64 KB")
    expect(rows.nth(2)).to_contain_text("ran only because of verbose mode")
    page.screenshot(path=SCREENSHOTS / "simulate.png", full_page=True)
    assert not Content.objects.exists()
