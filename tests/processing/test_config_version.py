"""One change, one bump: every admin save, API write, reorder or action moves a stash's
config_version exactly once (an unchanged save not at all), and workers still see every change."""

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from stash import processing
from stash.models import HookConfig, Stash

from ..admin.test_admin import HOOKS, change_url, judge, rows_of, stash_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=HOOKS)


@pytest.fixture
def other(make_stash):
    """Another stash, whose version no change of audit's may move."""
    return make_stash("other", hooks=HOOKS)


@pytest.fixture
def api(admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def versions(*stashes):
    return [Stash.objects.get(pk=stash.pk).config_version for stash in stashes]


@pytest.fixture
def bumps(audit, other):
    """``with bumps(1): ...``: the block moves audit's version by exactly 1 and other's not at all."""

    class Expect:
        def __init__(self, n):
            self.n = n

        def __enter__(self):
            self.before = versions(audit, other)

        def __exit__(self, *exc):
            if exc[0] is None:
                after = versions(audit, other)
                assert [b - a for a, b in zip(self.before, after, strict=True)] == [self.n, 0]

    return Expect


# --- the admin ------------------------------------------------------------------------------------


def test_a_stash_page_save_with_several_hook_edits_and_a_drag_bumps_once(admin_client, audit, bumps):
    rows = rows_of(audit)
    rows[0]["label"] = "Text first"
    rows[1]["params"] = {"words": ["spam", "scam"]}
    rows[2]["enabled"] = False
    for row, position in zip(rows, (2, 3, 1), strict=True):  # max_size dragged to the top
        row["position"] = position
    rows.append({"hook": "max_size", "params": {"max_bytes": 5}, "label": "Tiny"})
    with bumps(1):
        response = admin_client.post(change_url(audit), stash_post(audit, rows, description="edited"))
        assert response.status_code == 302
    assert list(audit.hooks.in_order().values_list("hook", "label", "position")) == [
        ("max_size", "", 1),
        ("require_fields", "Text first", 2),
        ("keyword_blocklist", "", 3),
        ("max_size", "Tiny", 4),
    ]
    # The cached pipeline of the old version is not used: the next item sees every change at once.
    trail = judge(audit, text="a scam").runs.get().trail
    assert [(entry["label"] or entry["hook"], entry["outcome"]) for entry in trail] == [
        ("Text first", "kept"),
        ("keyword_blocklist", "dropped"),
    ]


def test_a_stash_page_save_that_only_deletes_a_hook_bumps_once(admin_client, audit, bumps):
    rows = rows_of(audit)
    rows[1]["DELETE"] = True
    with bumps(1):
        assert admin_client.post(change_url(audit), stash_post(audit, rows)).status_code == 302
    assert list(audit.hooks.in_order().values_list("hook", "position")) == [("require_fields", 1), ("max_size", 2)]


def test_an_unchanged_stash_page_save_does_not_bump(admin_client, audit, bumps):
    with bumps(0):
        assert admin_client.post(change_url(audit), stash_post(audit, rows_of(audit))).status_code == 302


def test_a_stash_field_alone_bumps_once(admin_client, audit, bumps):
    with bumps(1):
        response = admin_client.post(change_url(audit), stash_post(audit, rows_of(audit), on_error="hold"))
        assert response.status_code == 302
    assert Stash.objects.get(pk=audit.pk).on_error == "hold"


def test_a_drag_in_the_hooks_list_bumps_once(admin_client, audit, bumps):
    require, blocklist, size = audit.hooks.in_order()
    moved = json.dumps({"updatedItems": [[size.pk, 1], [require.pk, 2], [blocklist.pk, 3]]})
    with bumps(1):
        response = admin_client.post(
            reverse("admin:stash_hookconfig_sortable_update"), moved, content_type="application/json"
        )
        assert response.status_code == 200
    assert [entry["hook"] for entry in judge(audit, text="hi").runs.get().trail] == [
        "max_size",
        "require_fields",
        "keyword_blocklist",
    ]


def test_the_hooks_list_saving_two_rows_bumps_once(admin_client, audit, bumps):
    data = {
        "form-TOTAL_FORMS": 3,
        "form-INITIAL_FORMS": 3,
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Save",
    }
    for index, config in enumerate(audit.hooks.in_order()):
        data[f"form-{index}-id"] = config.pk
        if config.hook == "require_fields":
            data[f"form-{index}-enabled"] = "on"
    url = reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={audit.pk}"
    with bumps(1):
        response = admin_client.post(url, data, follow=True)
    assert "2 hook configs were changed successfully." in response.content.decode()


def test_an_unchanged_hook_page_save_does_not_bump_and_a_change_bumps_once(admin_client, audit, bumps):
    config = audit.hooks.get(hook="max_size")
    data = {
        "hook": "max_size",
        "label": "",
        "enabled": "on",
        "mode": "enforce",
        "params": '{"max_bytes": 1000}',
        "condition": "",
        "on_error": "inherit",
        "timeout_ms": 2000,
    }
    with bumps(0):
        assert admin_client.post(change_url(config), data).status_code == 302
    with bumps(1):
        assert admin_client.post(change_url(config), {**data, "timeout_ms": 500}).status_code == 302


@pytest.mark.parametrize(
    "action, extra",
    [("enable", {}), ("disable", {}), ("duplicate", {}), ("move_to_bottom", {}), ("delete_selected", {"post": "yes"})],
)
def test_an_action_on_two_hooks_bumps_once(admin_client, audit, bumps, action, extra):
    selected = audit.hooks.filter(hook__in=["require_fields", "keyword_blocklist"])
    if action == "enable":
        selected.update(enabled=False)
    ids = list(selected.values_list("pk", flat=True))
    with bumps(1):
        response = admin_client.post(
            reverse("admin:stash_hookconfig_changelist"),
            {"action": action, "_selected_action": ids, **extra},
            follow=True,
        )
        assert response.status_code == 200
    assert sorted(audit.hooks.values_list("position", flat=True)) == list(range(1, audit.hooks.count() + 1))


# --- the API and processing -----------------------------------------------------------------------


HOOKS_URL = "/api/stashes/audit/hooks/"


def test_each_api_write_bumps_once(api, audit, bumps):
    with bumps(1):
        created = api.post(HOOKS_URL, {"hook": "max_size", "params": {"max_bytes": 5}}, format="json")
        assert created.status_code == 201
    url = f"{HOOKS_URL}{created.json()['id']}/"
    with bumps(1):
        assert api.patch(url, {"label": "Tiny", "enabled": False}, format="json").status_code == 200
    with bumps(0):
        assert api.patch(url, {"label": "Tiny"}, format="json").status_code == 200
    with bumps(1):
        assert api.put(url, {"hook": "max_size", "params": {"max_bytes": 6}}, format="json").status_code == 200
    ids = list(audit.hooks.in_order().values_list("pk", flat=True))
    with bumps(1):
        response = api.post(
            f"{HOOKS_URL}reorder/", {"order": ids[::-1], "config_version": versions(audit)[0]}, format="json"
        )
        assert response.status_code == 200
    assert response.json()["config_version"] == versions(audit)[0]
    with bumps(1):
        assert api.delete(url).status_code == 204


def test_a_reorder_bumps_once_and_a_model_save_that_changes_nothing_not_at_all(audit, bumps):
    ids = list(audit.hooks.in_order().values_list("pk", flat=True))
    with bumps(1):
        HookConfig.objects.reorder(audit, ids[::-1])
    with bumps(1):
        processing.place_hooks(audit, {ids[0]: 1})
    with bumps(0):
        HookConfig.objects.get(pk=ids[0]).save()
        Stash.objects.get(pk=audit.pk).save()
    with bumps(1):
        config = HookConfig.objects.get(pk=ids[0])
        config.label = "Renamed"
        config.save()


def test_one_change_bumps_each_stash_once_and_a_rolled_back_part_does_not_count(audit, other):
    before = versions(audit, other)
    with processing.one_change():
        HookConfig.objects.filter(stash=audit).update(enabled=False)
        with pytest.raises(RuntimeError), processing.one_change():
            HookConfig.objects.filter(stash=other).update(enabled=False)
            raise RuntimeError("rolled back")
        HookConfig.objects.filter(stash__in=[audit, other]).update(timeout_ms=100)
        processing.place_hooks(audit, {audit.hooks.get(hook="max_size").pk: 1})
    assert [b - a for a, b in zip(before, versions(audit, other), strict=True)] == [1, 1]


def test_a_checked_change_is_checked_once_at_its_end_and_a_refusal_undoes_all_of_it(audit, other):
    from stash.db import versioning

    seen, before = [], versions(audit, other)

    def refuse_audit(stash_ids):
        seen.append((stash_ids, list(audit.hooks.enabled().values_list("hook", flat=True))))
        if audit.pk in stash_ids:
            raise RuntimeError("refused")

    with versioning.checking(refuse_audit):
        with pytest.raises(RuntimeError), processing.one_change():
            HookConfig.objects.filter(stash__in=[audit, other]).update(enabled=False)
            processing.place_hooks(audit, {audit.hooks.get(hook="max_size").pk: 1})
        # Checked once, with the hooks as the whole change left them; then nothing of it was kept.
        assert seen == [(sorted([audit.pk, other.pk]), [])]
        assert versions(audit, other) == before and audit.hooks.enabled().count() == len(HOOKS)
        processing.set_enabled(other.hooks.all(), False)  # a change the check lets through is kept
        assert seen[-1] == ([other.pk], list(audit.hooks.enabled().values_list("hook", flat=True)))
        with pytest.raises(RuntimeError, match="outside any change"), processing.one_change():
            with versioning.checking(refuse_audit):
                pass
    assert versions(audit, other) == [before[0], before[1] + 1]
