"""How big a stash may grow, through the admin and the commands: hooks per stash, golden examples,
the bytes of a pipeline document, a hook's timeout; and the stash's pages stay fast at the limit."""

import json
import re

import pytest
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from stash.models import Example

from ..admin.test_admin import rows_of, stash_post
from ..admin.test_admin_pipelines import upload

pytestmark = pytest.mark.django_db

THREE = [
    ("require_fields", {"fields": ["text"]}),
    ("keyword_blocklist", {"words": ["spam"]}),
    ("max_size", {"max_bytes": 1000}),
]
HOOK_FORM = {
    "hook": "max_size",
    "params": '{"max_bytes": 10}',
    "mode": "enforce",
    "on_error": "inherit",
    "timeout_ms": 2000,
    "enabled": "on",
}
TOO_MANY_HOOKS = "A stash has at most 3 hooks (STASH_MAX_HOOKS); this would make 4."


@pytest.fixture
def small(settings):
    settings.STASH_MAX_HOOKS, settings.STASH_MAX_EXAMPLES = 3, 2
    return settings


@pytest.fixture
def full(make_stash, small):
    """A stash with all the hooks it may have."""
    return make_stash("full", hooks=THREE)


def document(hooks=4, **fields):
    return {
        "format": "stash.pipeline",
        "format_version": 1,
        "stash": {"slug": "full"},
        "hooks": [
            {"hook": "max_size", "label": f"Size {n}", "params": {"max_bytes": 100 + n}, **fields} for n in range(hooks)
        ],
    }


def messages_of(response):
    return [str(message) for message in get_messages(response.wsgi_request)]


# --- hooks ---------------------------------------------------------------------------------------


def test_the_hook_add_page_refuses_a_hook_past_the_limit(admin_client, full):
    response = admin_client.post(reverse("admin:stash_hookconfig_add"), {**HOOK_FORM, "stash": full.pk})

    assert response.status_code == 200
    assert response.context["adminform"].form.non_field_errors() == [TOO_MANY_HOOKS]
    assert full.hooks.count() == 3


def test_the_stash_page_refuses_new_rows_past_the_limit_and_takes_a_swap(admin_client, full):
    url = reverse("admin:stash_stash_change", args=[full.pk])
    new = {"hook": "max_size", "params": {"max_bytes": 10}}

    response = admin_client.post(url, stash_post(full, [*rows_of(full), new]))

    assert response.status_code == 200
    assert TOO_MANY_HOOKS in response.context["inline_admin_formsets"][0].formset.non_form_errors()
    assert full.hooks.count() == 3
    # One deleted, one added: still three.
    rows = rows_of(full)
    rows[0]["DELETE"] = True
    assert admin_client.post(url, stash_post(full, [*rows, new])).status_code == 302
    assert sorted(full.hooks.values_list("hook", flat=True)) == ["keyword_blocklist", "max_size", "max_size"]


def test_the_duplicate_action_copies_nothing_past_the_limit(admin_client, full):
    response = admin_client.post(
        reverse("admin:stash_hookconfig_changelist"),
        {"action": "duplicate", "_selected_action": [full.hooks.first().pk]},
        follow=True,
    )

    assert messages_of(response) == [f"Nothing was copied: {TOO_MANY_HOOKS}"]
    assert full.hooks.count() == 3


def test_an_import_past_the_limit_is_refused_by_the_command_and_the_admins_upload(admin_client, full, tmp_path):
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(document(hooks=4)))

    with pytest.raises(CommandError, match=re.escape(f"hooks: {TOO_MANY_HOOKS}")):
        call_command("stash_pipeline", "import", str(path))
    response = upload(admin_client, full, document(hooks=4))

    assert response.context["plan"] is None
    assert response.context["form"].errors["file"] == [f"hooks: {TOO_MANY_HOOKS}"]
    assert list(full.hooks.values_list("hook", flat=True)) == ["require_fields", "keyword_blocklist", "max_size"]
    assert not full.versions.filter(number__gt=full.config_version).exists()


def test_a_document_past_the_byte_limit_is_refused_before_it_is_read(admin_client, full, small, tmp_path):
    small.STASH_MAX_DOCUMENT_BYTES = 100
    text = json.dumps(document(hooks=2))
    path = tmp_path / "pipeline.json"
    path.write_text(text)
    refusal = f"A pipeline document has at most 100 bytes (STASH_MAX_DOCUMENT_BYTES); this one has {len(text):,}."

    with pytest.raises(CommandError, match=re.escape(refusal)):
        call_command("stash_pipeline", "import", str(path))
    response = upload(admin_client, full, text)

    assert response.context["form"].errors["file"] == [refusal]
    assert full.hooks.count() == 3


# --- golden examples ----------------------------------------------------------------------------


def test_examples_past_the_limit_are_refused_by_the_admin_and_imports(admin_client, full, tmp_path):
    for name in ("one", "two"):
        Example.objects.create(stash=full, name=name, payload={"text": name}, verdict="accepted")

    response = admin_client.post(
        reverse("admin:stash_example_add"),
        {"stash": full.pk, "name": "three", "payload": '{"text": "3"}', "verdict": "accepted"},
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.non_field_errors() == [
        "A stash has at most 2 golden examples (STASH_MAX_EXAMPLES); this would make 3."
    ]
    path = tmp_path / "pipeline.json"
    path.write_text(
        json.dumps(
            {
                **document(hooks=1),
                "examples": [{"name": f"e{n}", "payload": {"text": "hi"}, "verdict": "accepted"} for n in range(3)],
            }
        )
    )
    with pytest.raises(CommandError, match=r"examples: A stash has at most 2 golden examples"):
        call_command("stash_pipeline", "import", str(path))
    assert sorted(full.examples.values_list("name", flat=True)) == ["one", "two"]


# --- a hook's timeout ---------------------------------------------------------------------------


def test_a_timeout_past_the_time_limit_is_refused_by_the_admin_and_imports(
    admin_client, make_stash, settings, tmp_path
):
    settings.STASH_TIME_LIMIT = 30
    audit = make_stash("full", hooks=THREE[:1])
    refusal = "At most 30,000 ms: the hard time limit of a judging message (STASH_TIME_LIMIT, 30 s)."

    response = admin_client.post(
        reverse("admin:stash_hookconfig_add"), {**HOOK_FORM, "stash": audit.pk, "timeout_ms": 2_147_483_647}
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["timeout_ms"] == [refusal]
    rows = rows_of(audit)
    rows[0]["timeout_ms"] = 30_001
    response = admin_client.post(reverse("admin:stash_stash_change", args=[audit.pk]), stash_post(audit, rows))
    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.errors[0]["timeout_ms"] == [refusal]
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(document(hooks=1, timeout_ms=30_001)))
    with pytest.raises(CommandError, match=re.escape(f"Size 0 (max_size): {refusal}")):
        call_command("stash_pipeline", "import", str(path))
    assert list(audit.hooks.values_list("timeout_ms", flat=True)) == [2000]
    # At the limit is fine.
    rows[0]["timeout_ms"] = 30_000
    assert (
        admin_client.post(reverse("admin:stash_stash_change", args=[audit.pk]), stash_post(audit, rows)).status_code
        == 302
    )
    assert list(audit.hooks.values_list("timeout_ms", flat=True)) == [30_000]


# --- the stash's pages at the limit ---------------------------------------------------------------


def test_the_stash_page_and_the_hooks_list_read_as_much_at_the_limit_as_with_one_hook(
    admin_client, make_stash, settings
):
    """Their queries do not grow with the hooks (the rows' counters and activity are read in bulk)."""
    one = make_stash("one", hooks=[("max_size", {"max_bytes": 10})])
    limit = make_stash(
        "limit",
        hooks=[
            {"hook": "max_size", "label": f"Size {n}", "params": {"max_bytes": 10 + n}}
            for n in range(settings.STASH_MAX_HOOKS)
        ],
    )

    def queries(stash):
        counts = []
        for url in (
            reverse("admin:stash_stash_change", args=[stash.pk]),
            reverse("admin:stash_hookconfig_changelist") + f"?stash__id__exact={stash.pk}",
        ):
            with CaptureQueriesContext(connection) as captured:
                response = admin_client.get(url)
            assert response.status_code == 200
            counts.append(len(captured))
        return counts

    queries(one)  # the session and the like, read once
    assert queries(limit) == queries(one)
