"""The hook-management admin, through the test client: picking, validating, ordering, permissions, queries."""

import json
import threading

import pytest
from django.contrib.auth.models import Permission
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from stash import hooks, processing
from stash.models import Content, HookConfig, PipelineRun, Stash

from ..support.worker import wait_for

pytestmark = pytest.mark.django_db

HOOKS = [
    ("require_fields", {"fields": ["text"]}),
    ("keyword_blocklist", {"words": ["spam"]}),
    ("max_size", {"max_bytes": 1000}),
]


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=HOOKS)


def positions(stash):
    return list(stash.hooks.in_order().values_list("hook", "position"))


def order(stash):
    return [hook for hook, _position in positions(stash)]


def change_url(obj):
    return reverse(f"admin:stash_{obj._meta.model_name}_change", args=[obj.pk])


def stash_post(stash, rows, **fields):
    """The stash change form as the browser posts it; ``rows`` are dicts of inline fields."""
    data = {
        "name": stash.name,
        "slug": stash.slug,
        "description": stash.description,
        "on_error": stash.on_error,
        "max_payload_bytes": stash.max_payload_bytes,
        "is_active": "on",
        "examples_policy": stash.examples_policy,
        "hooks-TOTAL_FORMS": len(rows),
        "hooks-INITIAL_FORMS": sum(1 for row in rows if row.get("id")),
        "hooks-MIN_NUM_FORMS": 0,
        "hooks-MAX_NUM_FORMS": 1000,
        **fields,
    }
    for index, row in enumerate(rows):
        row = {
            "stash": stash.pk,
            "label": "",
            "condition": "",
            "mode": "enforce",
            "on_error": "inherit",
            "timeout_ms": 2000,
            "enabled": True,
            "params": {},
            **row,
        }
        for name, value in row.items():
            if name == "params":
                value = json.dumps(value) if not isinstance(value, str) else value
            if name in ("enabled", "DELETE"):
                if not value:
                    continue
                value = "on"
            data[f"hooks-{index}-{name}"] = "" if value is None else value
    return data


def rows_of(stash):
    return [
        {"id": c.pk, "hook": c.hook, "label": c.label, "params": c.params, "enabled": c.enabled, "position": c.position}
        for c in stash.hooks.in_order()
    ]


def judge(stash, **payload):
    item = Content.objects.create(stash=stash, payload=payload)
    processing.judge([item.pk])
    item.refresh_from_db()
    return item


def staff(django_user_model, username, *codenames):
    user = django_user_model.objects.create_user(username, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="stash", codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


# --- the stash page: hooks as a sortable inline -------------------------------------------------


def test_the_stash_page_lists_its_hooks_in_run_order_with_counters(admin_client, audit):
    judge(audit, text="hello")
    judge(audit, text="spam")
    HookConfig.objects.filter(hook="max_size").update(enabled=False)
    page = admin_client.get(change_url(audit)).content.decode().replace("\xa0", " ")  # figures do not break
    rows = [page.index(f'value="{hook}" selected') for hook in ("require_fields", "keyword_blocklist", "max_size")]
    assert rows == sorted(rows)
    assert "2 runs · 2 kept · 0 dropped · 0 held<br>0 errors · 0 overturned" in page  # require_fields
    assert "2 runs · 1 kept · 1 dropped · 0 held" in page  # keyword_blocklist
    assert 'class="module sortable"' in page  # sortable2's drag and drop is on
    assert 'name="hooks-2-enabled"' in page and 'name="hooks-2-enabled" checked' not in page


def test_dragging_hooks_on_the_stash_page_reorders_them_atomically(admin_client, audit):
    version = audit.config_version
    rows = rows_of(audit)
    # As sortable2's script leaves it after dragging max_size to the top: positions 1..n in the new order.
    for row, position in zip(rows, (2, 3, 1), strict=True):
        row["position"] = position
    response = admin_client.post(change_url(audit), stash_post(audit, rows))
    assert response.status_code == 302
    assert positions(audit) == [("max_size", 1), ("require_fields", 2), ("keyword_blocklist", 3)]
    audit.refresh_from_db()
    assert audit.config_version > version
    # The next item is judged in the new order.
    trail = judge(audit, text="spam").runs.get().trail
    assert [entry["hook"] for entry in trail] == ["max_size", "require_fields", "keyword_blocklist"]


def test_a_swap_that_would_collide_row_by_row_is_saved(admin_client, audit):
    rows = rows_of(audit)
    rows[0]["position"], rows[1]["position"] = 2, 1
    rows[1]["label"] = "No spam"  # a changed row and a new position in one save
    assert admin_client.post(change_url(audit), stash_post(audit, rows)).status_code == 302
    assert positions(audit) == [("keyword_blocklist", 1), ("require_fields", 2), ("max_size", 3)]
    assert HookConfig.objects.get(hook="keyword_blocklist").label == "No spam"


def test_adding_a_hook_on_the_stash_page_checks_its_params_and_appends_it(admin_client, audit):
    bad = rows_of(audit) + [{"hook": "keyword_blocklist", "params": {"whole_word": True}, "position": ""}]
    response = admin_client.post(change_url(audit), stash_post(audit, bad))
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.forms[3].errors
    assert "This field is required." in " ".join(errors["params"])
    assert audit.hooks.count() == 3

    good = rows_of(audit) + [
        {"hook": "keyword_blocklist", "label": "No scam", "params": {"words": ["scam"]}, "position": ""}
    ]
    assert admin_client.post(change_url(audit), stash_post(audit, good)).status_code == 302
    assert positions(audit)[-1] == ("keyword_blocklist", 4)
    assert judge(audit, text="a scam").reason == "contains blocked word 'scam' in text"


def test_deleting_a_hook_on_the_stash_page_closes_the_gap(admin_client, audit):
    rows = rows_of(audit)
    rows[0]["DELETE"] = True
    assert admin_client.post(change_url(audit), stash_post(audit, rows)).status_code == 302
    assert positions(audit) == [("keyword_blocklist", 1), ("max_size", 2)]


def test_a_bad_condition_is_shown_on_its_field(admin_client, audit):
    rows = rows_of(audit)
    rows[0]["condition"] = "__import__('os')"
    response = admin_client.post(change_url(audit), stash_post(audit, rows))
    assert response.status_code == 200
    assert "The condition" in response.context["inline_admin_formsets"][0].formset.forms[0].errors["condition"][0]
    assert HookConfig.objects.get(hook="require_fields").condition == ""


# --- the hook picker ----------------------------------------------------------------------------


def test_the_picker_lists_the_hooks_registered_now_with_kind_description_and_defaults(
    admin_client, register_temporarily
):
    class Shout(hooks.Transform):
        """Uppercase the text."""

        params_schema = {
            "type": "object",
            "properties": {"field": {"type": "string", "default": "text"}},
            "additionalProperties": False,
        }

    register_temporarily("test_shout", Shout)
    page = admin_client.get(reverse("admin:stash_hookconfig_add")).content.decode()
    assert ">test_shout (transform): Uppercase the text.</option>" in page
    picker = page.split('<script id="stash-hook-picker" type="application/json">', 1)[1].split("</script>", 1)[0]
    shout = next(hook for hook in json.loads(picker) if hook["name"] == "test_shout")
    assert (shout["defaults"], shout["params"]) == ('{\n  "field": "text"\n}', 'field (string, default "text")')
    assert '<select name="hook" data-hook-picker=""' in page  # a choice, never a text box
    assert '<textarea name="params" cols="60" rows="6" class="stash-json"' in page
    assert 'id="id_params">\n{}</textarea>' in page


def test_a_hook_name_that_is_not_registered_cannot_be_chosen(admin_client, audit):
    response = admin_client.post(
        reverse("admin:stash_hookconfig_add"),
        {
            "stash": audit.pk,
            "hook": "os.system",
            "params": "{}",
            "mode": "enforce",
            "on_error": "inherit",
            "timeout_ms": 2000,
            "enabled": "on",
        },
    )
    assert response.status_code == 200
    assert "Select a valid choice" in " ".join(response.context["adminform"].form.errors["hook"])
    assert audit.hooks.count() == 3


def test_params_that_break_the_schema_are_refused_on_the_params_field(admin_client, audit):
    data = {
        "stash": audit.pk,
        "hook": "max_size",
        "mode": "enforce",
        "on_error": "inherit",
        "timeout_ms": 2000,
        "enabled": "on",
        "label": "Small",
    }
    for params, message in [
        ('{"max_bytes": 0}', "max_bytes: Must be at least 1."),
        ('{"max_bytes": 10, "extra": 1}', "params: Not a param of this hook: extra."),
        ("{not json", "Enter a valid JSON."),
        ("[1, 2]", "params: Must be an object."),
    ]:
        response = admin_client.post(reverse("admin:stash_hookconfig_add"), {**data, "params": params})
        assert response.status_code == 200
        assert message in " ".join(response.context["adminform"].form.errors["params"])
    assert audit.hooks.count() == 3
    response = admin_client.post(reverse("admin:stash_hookconfig_add"), {**data, "params": '{"max_bytes": 10}'})
    assert response.status_code == 302
    assert positions(audit)[-1] == ("max_size", 4)


def test_a_config_whose_hook_is_gone_is_flagged_and_can_still_be_disabled(admin_client, audit):
    gone = audit.hooks.get(hook="max_size")
    HookConfig.objects.filter(pk=gone.pk).update(hook="retired_hook")
    listing = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode()
    assert "retired_hook ⚠ not registered" in listing
    page = admin_client.get(change_url(gone))
    assert "is not registered: this config fails by its on-error policy" in page.content.decode()
    assert "retired_hook (not registered)</option>" in page.content.decode()
    stash_page = admin_client.get(change_url(audit)).content.decode()
    assert "uses &#x27;retired_hook&#x27;, which is not registered" in stash_page

    response = admin_client.post(
        change_url(gone),
        {
            "hook": "retired_hook",
            "label": "old",
            "params": '{"max_bytes": 1000}',
            "mode": "enforce",
            "on_error": "skip",
            "timeout_ms": 2000,
        },
    )
    assert response.status_code == 302
    gone.refresh_from_db()
    assert (gone.enabled, gone.label, gone.on_error) == (False, "old", "skip")


# --- the hooks list ---------------------------------------------------------------------------


def test_the_hooks_list_toggles_enabled_in_place(admin_client, audit):
    configs = list(audit.hooks.in_order())
    data = {
        "form-TOTAL_FORMS": 3,
        "form-INITIAL_FORMS": 3,
        "form-MIN_NUM_FORMS": 0,
        "form-MAX_NUM_FORMS": 1000,
        "_save": "Save",
    }
    for index, config in enumerate(configs):
        data[f"form-{index}-id"] = config.pk
        if config.hook != "keyword_blocklist":
            data[f"form-{index}-enabled"] = "on"
    url = reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={audit.pk}"
    response = admin_client.post(url, data, follow=True)
    assert "1 hook config was changed successfully." in response.content.decode()
    assert list(audit.hooks.enabled().in_order().values_list("hook", flat=True)) == ["require_fields", "max_size"]
    assert [e["hook"] for e in judge(audit, text="spam").runs.get().trail] == ["require_fields", "max_size"]


def test_dragging_in_the_list_goes_through_one_atomic_reorder(admin_client, audit):
    require, blocklist, size = audit.hooks.in_order()
    version = audit.config_version
    update = reverse("admin:stash_hookconfig_sortable_update")
    # sortable2's script after dragging max_size above require_fields: the moved range, renumbered.
    moved = [[size.pk, 1], [require.pk, 2], [blocklist.pk, 3]]
    response = admin_client.post(update, json.dumps({"updatedItems": moved}), content_type="application/json")
    assert response.status_code == 200
    assert order(audit) == ["max_size", "require_fields", "keyword_blocklist"]
    assert [p for _h, p in positions(audit)] == [1, 2, 3]
    audit.refresh_from_db()
    assert audit.config_version > version


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_running_worker_judges_in_the_new_order_without_a_restart(worker, admin_client, make_stash):
    stash = make_stash("live", hooks=HOOKS)
    first = Content.objects.create(stash=stash, payload={"text": "spam"})
    wait_for(first.runs.exists, message="the worker to judge (and cache the pipeline of) the first item")
    require, blocklist, size = stash.hooks.in_order()
    moved = json.dumps({"updatedItems": [[size.pk, 1], [require.pk, 2], [blocklist.pk, 3]]})
    response = admin_client.post(
        reverse("admin:stash_hookconfig_sortable_update"), moved, content_type="application/json"
    )
    assert response.status_code == 200
    second = Content.objects.create(stash=stash, payload={"text": "spam"})
    run = wait_for(second.runs.first, message="the worker to judge the second item")
    assert [entry["hook"] for entry in run.trail] == ["max_size", "require_fields", "keyword_blocklist"]


def test_a_reorder_mixing_stashes_or_malformed_is_refused_and_changes_nothing(admin_client, audit, make_stash):
    other = make_stash("other", hooks=HOOKS[:1])
    update = reverse("admin:stash_hookconfig_sortable_update")
    mixed = [[audit.hooks.get(hook="max_size").pk, 1], [other.hooks.get().pk, 2]]
    for body in (json.dumps({"updatedItems": mixed}), "{not json", json.dumps({"updatedItems": [["x", 1]]})):
        assert admin_client.post(update, body, content_type="application/json").status_code == 400
    assert order(audit) == ["require_fields", "keyword_blocklist", "max_size"]


def test_the_list_is_draggable_only_when_narrowed_to_one_stash(admin_client, audit, make_stash):
    make_stash("other", hooks=HOOKS)
    everything = admin_client.get(reverse("admin:stash_hookconfig_changelist")).content.decode()
    assert 'class="drag handle"' not in everything
    assert "filter by one stash" in everything
    one = admin_client.get(reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={audit.pk}")
    assert one.content.decode().count('class="drag handle"') == 3
    assert "Drag the handles to change the order Audit runs its hooks in" in one.content.decode()


@pytest.mark.parametrize("stash_id", ["abc", "99999999999999999999999", "-1"])
def test_odd_stash_filters_never_break_the_hooks_list(admin_client, audit, stash_id):
    response = admin_client.get(reverse("admin:stash_hookconfig_changelist"), {"stash__id__exact": stash_id})
    assert response.status_code in (200, 302)
    assert 'class="drag handle"' not in response.content.decode()


def act(client, action, configs, **extra):
    return client.post(
        reverse("admin:stash_hookconfig_changelist"),
        {"action": action, "_selected_action": [c.pk for c in configs], **extra},
        follow=True,
    )


def test_enable_and_disable_actions(admin_client, audit):
    response = act(admin_client, "disable", audit.hooks.all())
    assert "3 hooks disabled." in response.content.decode()
    assert not audit.hooks.enabled().exists()
    response = act(admin_client, "enable", audit.hooks.filter(hook="max_size"))
    assert "1 hook enabled." in response.content.decode()
    assert list(audit.hooks.enabled().values_list("hook", flat=True)) == ["max_size"]


def test_duplicate_puts_a_disabled_copy_right_after_its_original(admin_client, audit):
    response = act(admin_client, "duplicate", audit.hooks.filter(hook="require_fields"))
    assert "1 hook copied, disabled, right after its original." in response.content.decode()
    copy = audit.hooks.get(position=2)
    assert (copy.hook, copy.label, copy.params, copy.enabled) == (
        "require_fields",
        "require_fields (copy)",
        {"fields": ["text"]},
        False,
    )
    assert [p for _h, p in positions(audit)] == [1, 2, 3, 4]


def test_move_to_top_and_bottom_keep_the_selection_in_order(admin_client, audit):
    response = act(admin_client, "move_to_top", audit.hooks.exclude(hook="require_fields"))
    assert "2 hooks moved to the top." in response.content.decode()
    assert order(audit) == ["keyword_blocklist", "max_size", "require_fields"]
    act(admin_client, "move_to_bottom", audit.hooks.filter(hook="keyword_blocklist"))
    assert positions(audit) == [("max_size", 1), ("require_fields", 2), ("keyword_blocklist", 3)]


def test_deleting_from_the_list_renumbers(admin_client, audit):
    act(admin_client, "delete_selected", audit.hooks.filter(hook="keyword_blocklist"), post="yes")
    assert positions(audit) == [("require_fields", 1), ("max_size", 2)]


# --- permissions ------------------------------------------------------------------------------


def test_a_non_staff_user_cannot_change_hooks(django_user_model, audit):
    user = django_user_model.objects.create_user("visitor", password="pw")
    client = Client()
    client.force_login(user)
    config = audit.hooks.get(hook="keyword_blocklist")
    response = client.post(
        change_url(config),
        {
            "hook": "keyword_blocklist",
            "params": '{"words": ["x"]}',
            "mode": "enforce",
            "on_error": "inherit",
            "timeout_ms": 1,
        },
    )
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    update = reverse("admin:stash_hookconfig_sortable_update")
    moved = json.dumps({"updatedItems": [[config.pk, 1]]})
    assert "/admin/login/" in client.post(update, moved, content_type="application/json")["Location"]
    assert "/admin/login/" in client.get(reverse("admin:stash_stash_simulate", args=[audit.pk]))["Location"]
    assert order(audit) == ["require_fields", "keyword_blocklist", "max_size"]
    config.refresh_from_db()
    assert config.params == {"words": ["spam"]}


def test_staff_without_hook_permissions_cannot_change_hooks(django_user_model, audit):
    client = staff(django_user_model, "viewer", "view_stash", "change_stash", "view_hookconfig")
    config = audit.hooks.get(hook="keyword_blocklist")
    assert client.get(change_url(config)).status_code == 200  # may look
    response = client.post(
        change_url(config),
        {
            "hook": "keyword_blocklist",
            "params": '{"words": ["x"]}',
            "mode": "enforce",
            "on_error": "inherit",
            "timeout_ms": 1,
        },
    )
    assert response.status_code == 403
    update = reverse("admin:stash_hookconfig_sortable_update")
    moved = json.dumps({"updatedItems": [[config.pk, 1], [audit.hooks.get(hook="require_fields").pk, 2]]})
    assert client.post(update, moved, content_type="application/json").status_code == 403
    act(client, "disable", audit.hooks.all())
    # The stash form saves, but the hooks in it are read-only: neither edits nor a new order stick.
    rows = rows_of(audit)
    rows[0]["position"], rows[1]["position"] = 2, 1
    rows[1]["params"] = {"words": ["x"]}
    rows[2]["enabled"] = False
    assert client.post(change_url(audit), stash_post(audit, rows, description="seen")).status_code == 302
    audit.refresh_from_db()
    assert audit.description == "seen"
    assert order(audit) == ["require_fields", "keyword_blocklist", "max_size"]
    assert audit.hooks.enabled().count() == 3
    config.refresh_from_db()
    assert config.params == {"words": ["spam"]}


def test_staff_with_hook_change_permission_can_reorder(django_user_model, audit):
    client = staff(django_user_model, "editor", "view_stash", "change_stash", "view_hookconfig", "change_hookconfig")
    rows = rows_of(audit)
    rows[0]["position"], rows[1]["position"] = 2, 1
    assert client.post(change_url(audit), stash_post(audit, rows)).status_code == 302
    assert order(audit) == ["keyword_blocklist", "require_fields", "max_size"]


# --- constant queries -------------------------------------------------------------------------


def fill(stash, n):
    """``n`` hooks (the first one named, the rest filler), ``n`` judged items with runs."""
    HookConfig.objects.bulk_create(
        [
            HookConfig(
                stash=stash,
                hook="require_fields",
                params={"fields": ["text"]},
                position=stash.hooks.count() + i + 1,
                runs_count=i,
            )
            for i in range(n)
        ]
    )
    first = stash.hooks.in_order().first()
    items = Content.objects.bulk_create(
        [
            Content(stash=stash, payload={"n": i}, status="rejected", decided_by=first, reason="missing text")
            for i in range(n)
        ]
    )
    PipelineRun.objects.bulk_create(
        [
            PipelineRun(
                content=item,
                revision=1,
                config_version=1,
                outcome="rejected",
                started_at=item.created_at,
                finished_at=item.created_at,
                trail=[
                    {
                        "config_id": first.pk,
                        "hook": "require_fields",
                        "position": 1,
                        "outcome": "dropped",
                        "duration_ms": 0.1,
                    }
                ],
            )
            for item in items
        ]
    )


def queries(client, url):
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


@pytest.mark.parametrize(
    "url",
    [
        "admin:stash_stash_changelist",
        "admin:stash_hookconfig_changelist",
        "admin:stash_content_changelist",
        "admin:stash_pipelinerun_changelist",
        "hooks of one stash",
    ],
)
def test_changelists_make_as_many_queries_for_200_rows_as_for_10(admin_client, make_stash, url):
    counts = []
    for size in (10, 200):
        stash = make_stash(f"s{size}")
        fill(stash, size)
        Stash.objects.bulk_create([Stash(slug=f"x{size}-{i}", name=f"x{i}") for i in range(size)])
        address = (
            reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={stash.pk}"
            if url == "hooks of one stash"
            else reverse(url)
        )
        counts.append(queries(admin_client, address))
        Content.objects.all().delete()
        Stash.objects.all().delete()
    assert counts[0] == counts[1]


# --- concurrency ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_reorders_never_leave_duplicate_or_missing_positions(make_stash, admin_user):
    stash = make_stash("busy", hooks=HOOKS * 3)
    ids = list(stash.hooks.in_order().values_list("pk", flat=True))
    errors = []

    def drag(seed):
        client = Client()
        client.force_login(admin_user)
        try:
            for step in range(6):
                # A drag in the list (sortable2's endpoint) and a move to the top, interleaved.
                moved = ids[(seed + step) % len(ids) :] + ids[: (seed + step) % len(ids)]
                body = json.dumps({"updatedItems": [[pk, index] for index, pk in enumerate(moved, start=1)]})
                response = client.post(
                    reverse("admin:stash_hookconfig_sortable_update"), body, content_type="application/json"
                )
                if response.status_code != 200:
                    errors.append(response.content)
                processing.place_hooks(stash, {ids[(seed * step) % len(ids)]: 0})
        except Exception as exc:  # reported below, from the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=drag, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    assert sorted(stash.hooks.values_list("position", flat=True)) == list(range(1, len(ids) + 1))
    assert sorted(stash.hooks.values_list("pk", flat=True)) == sorted(ids)
    stash.refresh_from_db()
    assert stash.config_version > 1 + len(ids)
