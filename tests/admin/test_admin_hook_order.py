"""The order of a stash's hooks on its page and in the hooks list: numbered filters and transforms,
sinks apart, one-step buttons, the disabled badge, the list's answer to a drag, hooks before settings."""

import json
import re

import pytest
from django.urls import reverse

from .test_admin import change_url, positions, rows_of, staff, stash_post

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret-s3cret"


@pytest.fixture
def mixed(make_stash):
    """A sink between two filters, as a stash made before sinks were listed apart may have it."""
    return make_stash(
        "mixed",
        name="Mixed",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "webhook", "label": "Notify", "params": {"url": "https://example.com/a", "secret": SECRET}},
            {"hook": "keyword_blocklist", "label": "Blocklist", "params": {"words": ["spam"]}, "enabled": False},
        ],
    )


def captions(page, group):
    body = re.search(rf'<tbody class="stash-{group}".*?</tbody>', page, re.S).group(0)
    body = re.sub(r"<span [^>]*hidden>[^<]*</span>", "", body)  # a badge not shown
    return [
        " ".join(re.sub(r"<[^>]+>", " ", caption).split())
        for caption in re.findall(r'<td class="original">\s*<p>(.*?)<(?:a|span class="stash-move")', body, re.S)
    ]


def test_the_filters_are_numbered_in_run_order_and_the_sinks_listed_apart_after_the_verdict(admin_client, mixed):
    page = admin_client.get(change_url(mixed)).content.decode()

    assert captions(page, "ordered") == ["1. Needs text", "2. Blocklist disabled"]
    assert captions(page, "sinks") == ["Notify"]
    assert "After the verdict: sinks" in page
    assert "(position " not in page  # the old captions, stale after a move
    for title in ("Needs text", "Blocklist", "Notify"):
        assert f'aria-label="Move {title} up"' in page and f'aria-label="Move {title} down"' in page
    assert page.count('<button type="button" class="stash-move-') == 6
    # Their inputs, named by the same numbers.
    assert 'aria-label="Hook 2 (Blocklist): Enabled"' in page and 'aria-label="Sink 1 (Notify): Enabled"' in page
    assert 'role="status" aria-live="polite"' in page
    assert re.search(r'<p class="stash-order-unsaved" hidden>', page)


def test_a_disabled_hook_has_a_badge_and_an_enabled_one_a_hidden_one(admin_client, mixed):
    page = admin_client.get(change_url(mixed)).content.decode()

    badges = re.findall(r'<span class="stash-badge stash-badge-disabled"( hidden)?>disabled</span>', page)
    assert sorted(badges) == ["", " hidden", " hidden"]  # Blocklist shown; Needs text and Notify hidden
    listed = admin_client.get(reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={mixed.pk}")
    assert '<span class="stash-disabled">Blocklist</span> <span class="stash-badge stash-badge-disabled">' in (
        listed.content.decode()
    )


def test_a_viewer_gets_the_order_without_buttons(django_user_model, mixed):
    viewer = staff(django_user_model, "viewer", "view_stash", "view_hookconfig")
    page = viewer.get(change_url(mixed)).content.decode()

    assert captions(page, "ordered") == ["1. Needs text", "2. Blocklist disabled"]
    assert "stash-move-up" not in page
    assert "stash-order-unsaved" not in page


def test_a_save_without_a_move_keeps_a_sink_where_it_was_and_a_move_puts_the_sinks_last(admin_client, mixed):
    version = mixed.config_version
    assert admin_client.post(change_url(mixed), stash_post(mixed, rows_of(mixed))).status_code == 302
    mixed.refresh_from_db()
    assert mixed.config_version == version
    assert positions(mixed) == [("require_fields", 1), ("webhook", 2), ("keyword_blocklist", 3)]

    # As hook_order.js posts a move: the filters 1..n as shown, then the sinks.
    rows = rows_of(mixed)
    for row, position in zip(rows, (2, 3, 1), strict=True):
        row["position"] = position
    rows[1]["params"] = {"url": "https://example.com/a"}  # the secret is kept
    assert admin_client.post(change_url(mixed), stash_post(mixed, rows)).status_code == 302
    assert positions(mixed) == [("keyword_blocklist", 1), ("require_fields", 2), ("webhook", 3)]


@pytest.mark.parametrize("position", ["up", "1.5", "2e3"])
def test_a_position_that_is_not_a_whole_number_is_refused_and_changes_nothing(admin_client, mixed, position):
    rows = rows_of(mixed)
    rows[2]["position"] = position
    response = admin_client.post(change_url(mixed), stash_post(mixed, rows))

    assert response.status_code == 200
    assert response.context["errors"]
    assert positions(mixed) == [("require_fields", 1), ("webhook", 2), ("keyword_blocklist", 3)]


def test_positions_posted_twice_or_out_of_range_still_leave_every_position_unique(admin_client, mixed):
    rows = rows_of(mixed)
    rows[0]["position"] = rows[2]["position"] = 1
    assert admin_client.post(change_url(mixed), stash_post(mixed, rows)).status_code == 302
    assert [position for _hook, position in positions(mixed)] == [1, 2, 3]

    assert [hook for hook, _position in positions(mixed)] == ["require_fields", "keyword_blocklist", "webhook"]

    rows = rows_of(mixed)
    rows[0]["position"] = 10**20  # past the end: last
    rows[2]["position"] = -5  # before the first: first
    assert admin_client.post(change_url(mixed), stash_post(mixed, rows)).status_code == 302
    assert positions(mixed) == [("webhook", 1), ("keyword_blocklist", 2), ("require_fields", 3)]


def test_a_drag_in_the_hooks_list_answers_every_position_of_the_stash(admin_client, mixed):
    needs, notify, blocklist = mixed.hooks.in_order()
    moved = [[blocklist.pk, 1], [needs.pk, 2], [notify.pk, 3]]
    response = admin_client.post(
        reverse("admin:stash_hookconfig_sortable_update"),
        json.dumps({"updatedItems": moved}),
        content_type="application/json",
    )

    assert response.status_code == 200
    assert response.json() == {"positions": {str(blocklist.pk): 1, str(needs.pk): 2, str(notify.pk): 3}, "count": 3}


def test_the_stash_page_shows_its_hooks_before_its_settings_and_the_add_page_its_settings(admin_client, mixed):
    page = admin_client.get(change_url(mixed)).content.decode()
    assert page.index('id="hooks-group"') < page.index('id="id_max_payload_bytes"')
    assert re.search(r"<h2[^>]*>Settings</h2>", page)

    add = admin_client.get(reverse("admin:stash_stash_add")).content.decode()
    assert add.index('id="id_name"') < add.index('id="hooks-group"')
