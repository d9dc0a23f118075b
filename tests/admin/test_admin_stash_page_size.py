"""The stash's admin page at the hooks limit: each hook adds a small row of its own, and what the
hook picker shows of every registered hook (its choice, params, schema, defaults) is on the page
once, not in every row."""

import json
import re

import pytest
from django.urls import reverse

from stash.core import registry

from .test_admin import staff

pytestmark = pytest.mark.django_db

# Three hooks with a params form, in turn: rows of each kind.
KINDS = [
    ("max_size", {"max_bytes": 65536}),
    ("require_fields", {"fields": ["text"]}),
    ("keyword_blocklist", {"words": ["spam", "free money"]}),
]
# A row: its dozen inputs, each named for screen readers ("Hook 42 (Size 42): enabled"), its params
# as a form and as raw JSON, its counters and drag handles: about 7 KB. Listing every registered
# hook with its schema and defaults in each row made it 35 KB; its choices alone would be 3 KB more.
ROW_BYTES = 10_000


def stash_page(client, make_stash, slug, count):
    stash = make_stash(
        slug, hooks=[{"hook": KINDS[n % 3][0], "label": f"Hook {n}", "params": KINDS[n % 3][1]} for n in range(count)]
    )
    response = client.get(reverse("admin:stash_stash_change", args=[stash.pk]))
    assert response.status_code == 200
    return response.content.decode()


def picker_data(page):
    """The hooks the picker offers, as the page holds them for hook_picker.js."""
    blocks = re.findall(r'<script id="stash-hook-picker" type="application/json">(.*?)</script>', page, re.S)
    assert len(blocks) == 1, f"{len(blocks)} blocks of the picker's hooks"
    return json.loads(blocks[0])


def test_each_hook_adds_a_small_row_to_the_stash_page(admin_client, make_stash, settings):
    ten = stash_page(admin_client, make_stash, "ten", 10)
    limit = stash_page(admin_client, make_stash, "limit", settings.STASH_MAX_HOOKS)

    per_hook = (len(limit.encode()) - len(ten.encode())) / (settings.STASH_MAX_HOOKS - 10)
    assert per_hook < ROW_BYTES, f"{per_hook:,.0f} bytes per hook"


def test_the_picker_offers_every_registered_hook_once_for_all_the_rows(admin_client, make_stash):
    page = stash_page(admin_client, make_stash, "audit", 3)

    hooks = picker_data(page)
    assert [hook["name"] for hook in hooks] == [cls.name for cls in registry.all()]
    blocklist = next(hook for hook in hooks if hook["name"] == "keyword_blocklist")
    assert blocklist["label"] == (
        "keyword_blocklist (filter): Drop content whose text contains a blocked word or phrase (case-insensitive)."
    )
    assert blocklist["defaults"] == '{\n  "whole_word": false\n}'
    assert blocklist["params"].startswith("words (list of string, required): ")
    assert json.loads(blocklist["schema"]) == registry.get("keyword_blocklist").params_schema
    # A row lists the empty choice and its own hook (the picker's script adds the others from the
    # page's list); the empty row that "Add another" copies, only the empty choice.
    rows = re.findall(r'<select name="hooks-(\d+|__prefix__)-hook"[^>]*>(.*?)</select>', page, re.S)
    assert [(row, re.findall(r'<option value="([^"]*)"', options)) for row, options in rows] == [
        ("0", ["", "max_size"]),
        ("1", ["", "require_fields"]),
        ("2", ["", "keyword_blocklist"]),
        ("__prefix__", [""]),
    ]
    # A hook no row uses is described once, in the page's list.
    assert page.count("Drop (or hold) content when a CEL condition over payload and meta holds.") == 1


def test_a_view_only_user_gets_no_picker(make_stash, django_user_model):
    viewer = staff(django_user_model, "viewer", "view_stash", "view_hookconfig")
    page = stash_page(viewer, make_stash, "audit", 3)

    assert "stash-hook-picker" not in page
    assert "data-hook-picker" not in page


def test_a_row_whose_hook_is_no_longer_registered_still_lists_it_and_says_so(admin_client, make_stash):
    stash = make_stash("audit", hooks=[("max_size", {"max_bytes": 10})])
    stash.hooks.update(hook="retired_hook")
    page = admin_client.get(reverse("admin:stash_stash_change", args=[stash.pk])).content.decode()

    options = re.search(r'<select name="hooks-0-hook"[^>]*>(.*?)</select>', page, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"', options) == ["", "retired_hook"]
    assert "This hook is not registered: it fails by its on-error policy." in options
    assert "retired_hook" not in [hook["name"] for hook in picker_data(page)]


# What opening a stash's page asks the database, whatever its number of hooks: the session and
# user, the stash with its counts, its hooks with their statistics (one for its sinks' deliveries),
# the charts, the messages.
PAGE_QUERIES = 12


def test_a_stash_page_with_20_hooks_is_under_300_kb_in_a_fixed_number_of_queries(
    admin_client, make_stash, django_assert_max_num_queries
):
    hooks = [{"hook": KINDS[n % 3][0], "label": f"Hook {n}", "params": KINDS[n % 3][1]} for n in range(18)]
    hooks += [
        {"hook": "webhook", "label": "Notify", "params": {"url": "https://example.com/a", "secret": "s" * 24}},
        {"hook": "max_size", "label": "Off", "params": {"max_bytes": 10}, "enabled": False},
    ]
    stash = make_stash("twenty", hooks=hooks)
    few = make_stash("few", hooks=[*hooks[:3], hooks[18]])  # a sink too: its deliveries are counted
    url = reverse("admin:stash_stash_change", args=[stash.pk])
    admin_client.get(url)  # the session's first request logs the login in

    with django_assert_max_num_queries(PAGE_QUERIES) as twenty:
        page = admin_client.get(url).content
    with django_assert_max_num_queries(PAGE_QUERIES) as three:
        admin_client.get(reverse("admin:stash_stash_change", args=[few.pk]))

    assert len(page) < 300_000, f"{len(page):,} bytes"
    assert len(twenty.captured_queries) == len(three.captured_queries)
    assert page.decode().count('class="form-row has_original') == 20
