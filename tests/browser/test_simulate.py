"""Simulate and replay in real Chromium: verbose runs, an existing item, a draft of the hooks, judging again."""

import json

import pytest
from playwright.sync_api import expect

from stash import processing
from stash.models import Content, HookConfig, PipelineRun

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"], "whole_word": True}},
            {"hook": "normalize_text", "label": "Lower", "params": {"lowercase": True}},
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}},
        ],
    )


def judge(stash, payload):
    item = Content.objects.create(stash=stash, payload=payload)
    processing.judge([item.pk])
    item.refresh_from_db()
    return item


def hooks_as_saved():
    return list(HookConfig.objects.order_by("pk").values_list("hook", "params", "enabled", "position", "runs_count"))


def trail_rows(page):
    """The rows of hooks in the simulation's trail (a transform's payload has a row of its own)."""
    return page.locator("#simulation table.stash-trail tbody tr:not(.stash-step-payload)")


def test_verbose_simulate_shows_every_hook_and_the_payload_after_a_transform(logged_in, live_server, audit):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/simulate/")
    page.fill("#id_payload", json.dumps({"text": "Buy SPAM Now"}))
    page.click("input[type=submit]")
    expect(page.locator("#simulation h2")).to_have_text("Verdict: rejected — contains blocked word 'spam' in text")
    rows = trail_rows(page)
    expect(rows).to_have_count(4)
    expect(rows.nth(1)).to_contain_text("decided the run")
    for index in (2, 3):
        expect(rows.nth(index)).to_contain_text("ran only because of verbose mode")
    payload = page.locator("#simulation tr.stash-step-payload")
    expect(payload).to_have_count(1)
    expect(payload).to_contain_text("The payload after this hook:")
    expect(payload.locator("pre")).to_have_text('{\n  "text": "buy spam now"\n}')

    page.uncheck("#id_verbose")
    page.click("input[type=submit]")
    expect(trail_rows(page)).to_have_count(2)  # a normal run stops at the drop
    assert not PipelineRun.objects.exists() and Content.objects.count() == 0


def test_simulate_on_an_existing_item(logged_in, live_server, audit, make_stash):
    page = logged_in
    item = judge(audit, {"text": "hello there"})
    # A transform masked the word: simulate runs on the payload as it was submitted.
    Content.objects.filter(pk=item.pk).update(original_payload={"text": "hello spam"}, payload={"text": "hello ****"})
    other = judge(make_stash("other"), {"text": "elsewhere"})
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/simulate/")
    page.fill("#id_content_id", str(other.pk))
    page.click("input[type=submit]")
    expect(page.locator(".field-content_id .errorlist, .errorlist")).to_contain_text(
        f"Item {other.pk} belongs to the stash other, not to audit."
    )
    expect(page.locator("#simulation")).to_have_count(0)

    page.fill("#id_content_id", str(item.pk))
    page.click("input[type=submit]")
    result = page.locator("#simulation")
    expect(result).to_contain_text(f"On the payload item {item.pk} was submitted with (before any transform).")
    expect(result.locator("h2")).to_have_text("Verdict: rejected — contains blocked word 'spam' in text")
    assert Content.objects.get(pk=item.pk).status == "accepted" and PipelineRun.objects.count() == 2


def type_raw_params(page, index, text):
    """Type ``text`` as the raw JSON params of the stash page's hook row ``index``."""
    row = page.locator(f"#hooks-{index}")
    row.locator(".stash-params-fold").evaluate("fold => { fold.open = true; }")
    row.locator(".stash-params-raw-toggle").check()
    page.fill(f"#id_hooks-{index}-params", text)


def test_a_draft_of_the_hooks_runs_from_the_stash_page_and_saves_nothing(logged_in, live_server, audit):
    page = logged_in
    judge(audit, {"text": "hello there"})
    saved, runs = hooks_as_saved(), PipelineRun.objects.count()
    page.set_viewport_size({"width": 1500, "height": 1000})
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    type_raw_params(page, 1, '{"words": ["hello"], "whole_word": true}')
    page.uncheck("#id_hooks-2-enabled")  # the transform, off in the draft
    with page.context.expect_page() as opened:
        page.click("input[name=_draft]")
    draft = opened.value
    draft.wait_for_load_state()
    expect(draft.locator("#draft h2")).to_have_text("Draft hooks (not saved)")
    # Numbered as they run, without a gap where the transform is off.
    expect(draft.locator("#enabled-hooks")).to_have_text(
        "3 enabled hooks run, in this order: 1. Needs text · 2. No spam · 3. At most 64 KB"
    )
    # Straight away on the latest item's payload, with every hook shown.
    expect(draft.locator("#simulation h2")).to_have_text("Verdict: rejected — contains blocked word 'hello' in text")
    expect(trail_rows(draft)).to_have_count(3)

    draft.fill("#id_payload", json.dumps({"text": "goodbye"}))
    draft.click(".submit-row input[type=submit]")  # "Simulate the draft" (the shadow form has its own)
    expect(draft.locator("#simulation h2")).to_have_text("Verdict: accepted")
    expect(trail_rows(draft)).to_have_count(3)  # still the draft: the transform stays off

    # A draft a save would refuse shows why, and runs nothing.
    type_raw_params(page, 1, '{"words": "hello"}')
    with page.context.expect_page() as opened:
        page.click("input[name=_draft]")
    refused = opened.value
    refused.wait_for_load_state()
    expect(refused.locator("#draft .errorlist")).to_contain_text("Hook 2 (No spam): params:")
    expect(refused.locator("#simulation")).to_have_count(0)
    # The stash page still holds the edits, unsaved.
    expect(page.locator("#id_hooks-1-params")).to_have_value('{"words": "hello"}')
    assert hooks_as_saved() == saved and PipelineRun.objects.count() == runs


NOTIFY = {"url": "https://example.com/hooks/stash", "secret": "s3cret-s3cret-s3cret-s3cret"}


def test_the_hooks_run_are_numbered_without_gaps_and_the_sinks_named_apart(logged_in, live_server, make_stash):
    page = logged_in
    stash = make_stash(
        "notified",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": NOTIFY},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}, "enabled": False},
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}, "mode": "observe"},
        ],
    )
    line = (
        "2 enabled hooks run, in this order: 1. Needs text · 2. At most 64 KB (observing); then, on the verdict: Notify"
    )
    page.goto(f"{live_server.url}/admin/stash/stash/{stash.pk}/simulate/")
    expect(page.locator("#enabled-hooks")).to_have_text(line)
    page.fill("#id_payload", json.dumps({"text": "hello"}))
    page.click("input[type=submit]")
    # The trail numbers the hooks as the line does.
    expect(page.locator("#simulation h2")).to_have_text("Verdict: accepted")
    expect(trail_rows(page).locator("td:first-child")).to_have_text(["1", "2"])
    expect(trail_rows(page).nth(1)).to_contain_text("At most 64 KB")
    expect(page.locator("#enabled-hooks")).to_have_text(line)

    page.goto(f"{live_server.url}/admin/stash/stash/{stash.pk}/replay/")
    expect(page.locator("#enabled-hooks")).to_have_text(line)


def test_replay_explains_each_change_and_judges_the_items_again(logged_in, live_server, audit, broker):
    page = logged_in
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    spam = judge(audit, {"text": "spam, the whole " + "long story " * 12})
    picture = judge(audit, {"text": "a scam", "filename": "cat.png", "b64_file": png})
    judge(audit, {"text": "fine"})
    HookConfig.objects.filter(label="No spam").update(params={"words": ["scam"]})
    page.goto(f"{live_server.url}/admin/stash/stash/{audit.pk}/change/")
    page.click("text=Replay")
    page.click("input[type=submit]")
    expect(page.locator("#replay h2")).to_have_text(
        "Of the latest 3 items, the current hooks would newly reject 1, would newly accept 1, would newly hold 0."
    )
    rows = page.locator("#replay tbody tr")
    expect(rows).to_have_count(2)
    photo = rows.filter(has_text="cat.png")
    expect(photo.locator("img.stash-thumbnail")).to_be_visible()
    assert photo.locator("img.stash-thumbnail").evaluate("img => img.naturalWidth") == 1  # the real picture
    expect(photo).to_contain_text("accepted")
    expect(photo).to_contain_text("→ rejected (by No spam)")
    story = rows.filter(has_text="spam, the whole long story")
    expect(story).to_contain_text("rejected (by No spam)")
    expect(story).to_contain_text("→ accepted")

    broker.messages.clear()
    page.click("text=Judge these items again")
    expect(page.locator(".messagelist")).to_have_text("2 items sent to be judged again.")
    assert sorted(broker.ids) == sorted([str(spam.pk), str(picture.pk)])
    assert {Content.objects.get(pk=item.pk).status for item in (spam, picture)} == {"pending"}
