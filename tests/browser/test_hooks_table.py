"""The stash's table of hooks at 1280 px and the params form made from each hook's schema, in real Chromium."""

import pytest
from playwright.sync_api import expect

from stash.core import registry
from stash.models import HookConfig

from ..support.worker import wait_for
from .test_admin import drag, labels

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "s3cret-s3cret-s3cret-s3cret"
LONG_LABEL = "Drops every item whose text mentions any of the words the moderators listed last week"


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit",
        name="Audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {
                "hook": "keyword_blocklist",
                "label": LONG_LABEL,
                "params": {"words": ["spam", "free money", "a rather long phrase that nobody should write"]},
            },
            {"hook": "max_size", "label": "At most 64 KB", "params": {"max_bytes": 65536}},
            {
                "hook": "webhook",
                "label": "Notify",
                "condition": "has(payload.data) && payload.data.probability > 0.5",
                "params": {
                    "url": "https://example.com/hooks/stash/accepted/with/a/long/path",
                    "secret": SECRET,
                    "events": ["accept", "reject"],
                },
            },
        ],
    )


def overflow(page):
    """How far the page and the hooks table stick out: of the window, and of the hooks' section."""
    return page.evaluate("""() => {
        const table = document.querySelector('#hooks-group table').getBoundingClientRect();
        const section = document.querySelector('#hooks-group fieldset').getBoundingClientRect();
        return {page: document.documentElement.scrollWidth - window.innerWidth,
                table: table.right - section.right};
    }""")


def stash_page(page, live_server, stash):
    page.goto(f"{live_server.url}/admin/stash/stash/{stash.pk}/change/")
    return page.locator("#hooks-group tr.has_original")


def test_the_hooks_table_fits_a_1280_px_window_with_every_field_labelled(logged_in, live_server, audit):
    page = logged_in
    assert page.viewport_size["width"] == 1280
    rows = stash_page(page, live_server, audit)
    expect(rows).to_have_count(4)
    expect(page.locator("#nav-sidebar")).to_be_visible()  # the admin's sidebar takes its share
    assert max(overflow(page).values()) <= 0, overflow(page)
    for name in (
        "Hook",
        "Label",
        "Enabled",
        "Mode",
        "On error",
        "Timeout (ms)",
        "Params",
        "Condition",
        "Counters",
        "Delete?",
    ):
        expect(page.locator("#hooks-group thead th", has_text=name).first).to_be_visible()
    # Each hook's params are one line until opened; opened, they still fit.
    notify = rows.nth(3)
    expect(notify.locator(".stash-params-fold summary")).to_contain_text('url: "https://example.com/hooks/')
    expect(notify.locator(".stash-params-fold summary")).not_to_contain_text(SECRET)
    expect(notify.locator(".stash-params-form")).to_be_hidden()
    for index in range(4):
        rows.nth(index).locator(".stash-params-fold summary").click()
    expect(notify.locator(".stash-params-form input[type=password]")).to_have_value("")
    expect(rows.nth(0).locator(".stash-params-form")).to_be_visible()
    assert max(overflow(page).values()) <= 0, overflow(page)
    # And the counters, the delete box and the timeout are inside the section, on screen.
    for cell in ("td.field-hook_counters", "td.delete", "td.field-timeout_ms"):
        box = notify.locator(cell).bounding_box()
        assert box["x"] + box["width"] <= page.evaluate(
            "document.querySelector('#hooks-group fieldset').getBoundingClientRect().right"
        ), cell


def test_a_bad_value_in_the_params_form_shows_its_error_and_saves_nothing_then_a_good_one_saves(
    logged_in, live_server, audit
):
    page = logged_in
    rows = stash_page(page, live_server, audit)
    size = rows.nth(2)
    size.locator(".stash-params-fold summary").click()
    expect(size.locator(".stash-params-raw-toggle")).not_to_be_checked()  # the form, not raw JSON
    size.locator(".stash-params-form input[type=number]").fill("0")
    page.click("input[name=_save]")
    expect(page.locator(".errornote")).to_be_visible()
    size = page.locator("#hooks-2")
    expect(size.locator("td.field-params > .errorlist")).to_have_text(
        "Invalid params for hook 'max_size': max_bytes: 0 is less than the minimum of 1"
    )
    expect(size.locator(".stash-params-form")).to_be_visible()  # opened where the error is
    expect(size.locator(".stash-params-form")).to_contain_text("0 is less than the minimum of 1")
    assert HookConfig.objects.get(hook="max_size").params == {"max_bytes": 65536}

    size.locator(".stash-params-form input[type=number]").fill("1000")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert HookConfig.objects.get(hook="max_size").params == {"max_bytes": 1000}
    webhook = HookConfig.objects.get(hook="webhook")
    assert webhook.params["secret"] == SECRET  # saved along, never shown, kept


def test_the_hook_config_page_edits_params_in_the_form_or_as_raw_json(logged_in, live_server, audit):
    page = logged_in
    blocklist = audit.hooks.get(hook="keyword_blocklist")
    page.goto(f"{live_server.url}/admin/stash/hookconfig/{blocklist.pk}/change/")
    editor = page.locator(".field-params .stash-params-editor")
    words = editor.locator(".stash-params-form input[type=text]")
    expect(words.first).to_have_value("spam")
    editor.locator(".stash-params-form").get_by_role("button", name="Add item").first.click()
    words.nth(3).fill("scam")
    editor.locator(".stash-params-form input[type=checkbox]").check()  # whole_word
    # Raw JSON shows what the form holds (the empty list of fields left out), and back.
    editor.get_by_label("edit as raw JSON").check()
    raw = page.locator("#id_params")
    expect(raw).to_be_visible()
    expect(raw).to_have_value(
        '{\n  "words": [\n    "spam",\n    "free money",\n'
        '    "a rather long phrase that nobody should write",\n    "scam"\n  ],\n'
        '  "whole_word": true\n}'
    )
    raw.fill('{"words": ["scam", "spam"], "whole_word": true}')
    editor.get_by_label("edit as raw JSON").uncheck()
    expect(words).to_have_count(2)  # the two words; the list of fields is empty
    expect(words.nth(1)).to_have_value("spam")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    blocklist.refresh_from_db()
    assert blocklist.params == {"words": ["scam", "spam"], "whole_word": True}


def test_broken_raw_json_says_just_that_and_keeps_the_switch_on_raw(logged_in, live_server, audit):
    page = logged_in
    size = audit.hooks.get(hook="max_size")
    page.goto(f"{live_server.url}/admin/stash/hookconfig/{size.pk}/change/")
    page.get_by_label("edit as raw JSON").check()
    page.fill("#id_params", '{"max_bytes": 10')
    page.get_by_label("edit as raw JSON").click()  # refused: the form cannot show broken JSON
    expect(page.get_by_label("edit as raw JSON")).to_be_checked()
    expect(page.locator(".stash-params-note")).to_have_text("Fix the JSON first: it must be one JSON object.")
    page.click("input[name=_save]")
    expect(page.locator(".field-params .errorlist")).to_have_text("Enter a valid JSON.")
    expect(page.locator("#id_params")).to_have_value('{"max_bytes": 10')
    size.refresh_from_db()
    assert size.params == {"max_bytes": 65536}


def test_the_hooks_list_of_the_only_stash_drags(logged_in, live_server, audit):
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/hookconfig/")
    expect(page.locator("#changelist-filter")).not_to_contain_text("By stash")  # one stash: no such filter
    expect(page.locator(".stash-hint")).to_contain_text("Drag the handles to change the order Audit runs")
    handles = page.locator("#result_list div.drag.handle")
    expect(handles).to_have_count(4)
    expect(page.locator("#result_list")).to_contain_text("Needs text")
    drag(page, handles.nth(2), handles.nth(0))
    wait_for(lambda: labels(audit)[0] == "At most 64 KB", timeout=15, message="the drag to reach the database")
    assert labels(audit) == ["At most 64 KB", "Needs text", LONG_LABEL, "Notify"]


def test_picking_another_hook_switches_its_params_to_raw_json_until_saved(logged_in, live_server, audit):
    page = logged_in
    size = audit.hooks.get(hook="max_size")
    page.goto(f"{live_server.url}/admin/stash/hookconfig/{size.pk}/change/")
    expect(page.get_by_label("edit as raw JSON")).not_to_be_checked()
    page.select_option("#id_hook", "require_fields")
    expect(page.get_by_label("edit as raw JSON")).to_be_checked()
    expect(page.locator(".stash-params-note")).to_have_text("Save to edit the params of this hook in a form.")
    expect(page.locator("#id_params")).to_have_value('{\n  "max_bytes": 65536\n}')  # what the form held
    page.get_by_label("edit as raw JSON").click()  # the form is the old hook's: refused
    expect(page.get_by_label("edit as raw JSON")).to_be_checked()
    page.fill("#id_params", '{"fields": ["title"]}')
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    size.refresh_from_db()
    assert (size.hook, size.params) == ("require_fields", {"fields": ["title"]})
    # Saved: the form is the new hook's.
    expect(page.get_by_label("edit as raw JSON")).not_to_be_checked()
    expect(page.locator(".stash-params-form input[type=text]").first).to_have_value("title")


def test_a_row_of_the_hooks_table_offers_every_hook_and_a_new_row_gets_the_picked_ones_defaults(
    logged_in, live_server, audit
):
    page = logged_in
    rows = stash_page(page, live_server, audit)
    picker = rows.nth(0).locator("select[name$=-hook]")
    expect(picker.locator("option")).to_have_count(len(registry.all()) + 1)  # and the empty choice
    expect(picker).to_have_value("require_fields")
    expect(rows.nth(0).locator(".stash-hook-help")).to_contain_text("fields (list of string, required)")
    page.locator("#hooks-group .add-row a").click()
    new = page.locator("#hooks-4")
    new.locator("select[name$=-hook]").select_option("keyword_blocklist")
    expect(new.locator("textarea[name$=-params]")).to_have_value('{\n  "whole_word": false\n}')
    expect(new.locator(".stash-hook-help")).to_contain_text("words (list of string, required)")
    new.locator("textarea[name$=-params]").fill('{"words": ["scam"]}')
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert audit.hooks.filter(hook="keyword_blocklist", params={"words": ["scam"]}).exists()


def numbered(page):
    """The filters and transforms as the stash page shows them: "1. Needs text", ..."""
    return [
        " ".join(text.split())
        for text in page.locator("#hooks-group tbody.stash-ordered tr.has_original").evaluate_all(
            "rows => rows.map(row => row.querySelector('.stash-hook-number').textContent + ' '"
            " + row.querySelector('.stash-hook-title').textContent)"
        )
    ]


def test_a_hook_moves_one_step_by_keyboard_keeps_the_focus_says_where_it_went_and_saves(logged_in, live_server, audit):
    page = logged_in
    stash_page(page, live_server, audit)
    assert numbered(page) == ["1. Needs text", f"2. {LONG_LABEL}", "3. At most 64 KB"]
    unsaved = page.locator(".stash-order-unsaved")
    expect(unsaved).to_be_hidden()
    status = page.locator("#hooks-group .stash-order-status")
    expect(status).to_have_attribute("aria-live", "polite")

    up = page.get_by_role("button", name="Move At most 64 KB up")
    up.focus()
    page.keyboard.press("Enter")
    expect(up).to_be_focused()  # the focus moved with its row
    expect(status).to_have_text("At most 64 KB moved to position 2 of 3.")
    assert numbered(page) == ["1. Needs text", "2. At most 64 KB", f"3. {LONG_LABEL}"]
    expect(unsaved).to_be_visible()
    expect(unsaved).to_contain_text("not saved yet")
    # Its inputs are named after the new number too.
    expect(page.get_by_label("Hook 2 (At most 64 KB): Enabled", exact=True)).to_be_visible()
    expect(page.get_by_label(f"Hook 3 ({LONG_LABEL}): Label", exact=True)).to_have_value(LONG_LABEL)

    page.keyboard.press("Space")
    expect(up).to_be_focused()
    expect(status).to_have_text("At most 64 KB moved to position 1 of 3.")
    page.keyboard.press("Enter")
    expect(status).to_have_text("At most 64 KB is already first.")
    assert numbered(page) == ["1. At most 64 KB", "2. Needs text", f"3. {LONG_LABEL}"]
    assert labels(audit) == ["Needs text", LONG_LABEL, "At most 64 KB", "Notify"]  # nothing saved yet

    # Tab reaches the next button: "down" of the same hook, which undoes the last step.
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Move At most 64 KB down")).to_be_focused()
    page.keyboard.press("Enter")
    expect(status).to_have_text("At most 64 KB moved to position 2 of 3.")

    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert labels(audit) == ["Needs text", "At most 64 KB", LONG_LABEL, "Notify"]
    assert list(audit.hooks.in_order().values_list("position", flat=True)) == [1, 2, 3, 4]
    assert numbered(page) == ["1. Needs text", "2. At most 64 KB", f"3. {LONG_LABEL}"]
    expect(unsaved).to_be_hidden()  # saved


def test_moving_back_to_the_saved_order_hides_the_notice_and_a_save_moves_nothing(logged_in, live_server, audit):
    page = logged_in
    stash_page(page, live_server, audit)
    version = audit.config_version
    page.get_by_role("button", name="Move Needs text down").click()
    expect(page.locator(".stash-order-unsaved")).to_be_visible()
    page.get_by_role("button", name="Move Needs text up").click()
    expect(page.locator(".stash-order-unsaved")).to_be_hidden()
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    audit.refresh_from_db()
    assert audit.config_version == version


def test_sinks_are_listed_apart_after_the_verdict_and_a_save_puts_them_after_the_filters(
    logged_in, live_server, make_stash
):
    stash = make_stash(
        "mixed",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": {"url": "https://example.com/a", "secret": SECRET}},
            {"hook": "keyword_blocklist", "label": "Blocklist", "params": {"words": ["spam"]}},
            {"hook": "webhook", "label": "Archive", "params": {"url": "https://example.com/b", "secret": SECRET}},
        ],
    )
    page = logged_in
    page.goto(f"{live_server.url}/admin/stash/stash/{stash.pk}/change/")
    assert numbered(page) == ["1. Needs text", "2. Blocklist"]  # "3. Notify · 4. Blocklist" no more
    sinks = page.locator("#hooks-group tbody.stash-sinks")
    expect(sinks.locator("tr.stash-group-heading")).to_contain_text("After the verdict: sinks")
    expect(sinks.locator("tr.has_original .stash-hook-title")).to_have_text(["Notify", "Archive"])
    expect(sinks.locator(".stash-hook-number")).to_have_count(0)

    page.get_by_role("button", name="Move Blocklist up").click()
    expect(page.locator("#hooks-group .stash-order-status")).to_have_text("Blocklist moved to position 1 of 2.")
    page.get_by_role("button", name="Move Archive up").click()
    expect(page.locator("#hooks-group .stash-order-status")).to_have_text(
        "Archive moved to position 1 of 2 among the sinks."
    )
    page.get_by_role("button", name="Move Archive up").click()
    expect(page.locator("#hooks-group .stash-order-status")).to_have_text("Archive is already first.")
    assert numbered(page) == ["1. Blocklist", "2. Needs text"]
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert labels(stash) == ["Blocklist", "Needs text", "Archive", "Notify"]
    assert list(stash.hooks.in_order().values_list("position", flat=True)) == [1, 2, 3, 4]


def test_a_drag_renumbers_the_hooks_and_says_the_order_is_unsaved(logged_in, live_server, audit):
    page = logged_in
    rows = stash_page(page, live_server, audit)
    drag(page, rows.nth(2).locator("td.original .stash-hook-title"), rows.nth(0).locator("td.original p"))
    expect(page.locator(".stash-order-unsaved")).to_be_visible()
    expect(page.locator("#hooks-group .stash-order-status")).to_have_text("At most 64 KB moved to position 1 of 3.")
    assert numbered(page) == ["1. At most 64 KB", "2. Needs text", f"3. {LONG_LABEL}"]
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert labels(audit) == ["At most 64 KB", "Needs text", LONG_LABEL, "Notify"]


def test_at_1280_by_800_the_stash_page_opens_on_its_hooks_with_its_settings_below(logged_in, live_server, audit):
    page = logged_in
    page.set_viewport_size({"width": 1280, "height": 800})
    rows = stash_page(page, live_server, audit)
    expect(rows.first).to_be_in_viewport()
    settings = page.get_by_role("heading", name="Settings")
    expect(settings).not_to_be_in_viewport()
    assert settings.bounding_box()["y"] > page.locator("#hooks-group").bounding_box()["y"]
    size = page.locator("#id_max_payload_bytes")
    size.fill("1048576000")
    assert page.evaluate("el => el.scrollWidth <= el.clientWidth", size.element_handle())
    assert size.bounding_box()["width"] >= 100


def test_a_page_shown_again_with_an_error_keeps_the_moved_order_unsaved_until_saved(logged_in, live_server, audit):
    page = logged_in
    stash_page(page, live_server, audit)
    page.get_by_role("button", name="Move At most 64 KB up").click()
    page.fill("#id_hooks-0-condition", "payload.text ==")
    page.click("input[name=_save]")
    expect(page.locator(".errornote")).to_be_visible()
    assert numbered(page) == ["1. Needs text", "2. At most 64 KB", f"3. {LONG_LABEL}"]
    expect(page.locator(".stash-order-unsaved")).to_be_visible()
    assert labels(audit) == ["Needs text", LONG_LABEL, "At most 64 KB", "Notify"]

    page.fill("#id_hooks-0-condition", "")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert labels(audit) == ["Needs text", "At most 64 KB", LONG_LABEL, "Notify"]
