"""A stash's shadows in the admin: linked from the stash page, started from a version or a file, a page per
shadow with its report and both trails, Stop and Promote with their permissions."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from stash import processing
from stash.models import HookConfig, ShadowRun

from ..support.shadows import run_shadow_messages, save_and_judge
from .test_admin import change_url, rows_of, staff
from .test_admin_pipelines import EDITOR, HOOKS, VIEWER, said, url
from .test_admin_simulate import draft_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", name="Audit", hooks=HOOKS[:2])  # a filter that a draft changes, no sink


def draft_file(stash, words=("spam", "eggs")):
    document = processing.export_document(stash)
    document["hooks"][1]["params"]["words"] = list(words)
    return SimpleUploadedFile("draft.json", json.dumps(document).encode())


def test_the_stash_page_links_to_its_shadows(admin_client, audit):
    assert url("shadows", audit) in admin_client.get(change_url(audit)).content.decode()


def test_start_from_a_file_see_the_report_and_both_trails_then_stop(
    admin_client, audit, broker, django_capture_on_commit_callbacks
):
    started = admin_client.post(
        url("shadows", audit), {"document": draft_file(audit), "percent": 100, "count": 10}, follow=True
    )
    assert said(started) == [f"Shadow {audit.shadows.get().pk} started."]
    shadow = audit.shadows.get()
    (item,) = save_and_judge(audit, [{"text": "eggs"}], django_capture_on_commit_callbacks)
    assert run_shadow_messages(broker) == 0  # judged by the live worker: no message carries an item
    assert ShadowRun.objects.count() == 1

    page = admin_client.get(url("shadow", audit, shadow.pk)).content.decode()

    assert "1 item: 0 agreed, 1 disagreed." in page
    assert "accepted/rejected" in page
    assert str(item.pk) in page and "dropped" in page and "kept" in page
    assert 'action="' + url("shadow_stop", audit, shadow.pk) in page
    stopped = admin_client.post(url("shadow_stop", audit, shadow.pk), follow=True)
    assert said(stopped) == [f"Shadow {shadow.pk} stopped."]
    assert admin_client.get(url("shadow_stop", audit, shadow.pk)).status_code == 405


def test_start_from_a_version_and_promote(admin_client, audit):
    old = audit.config_version
    processing.import_document(audit, json.loads(draft_file(audit).read()))
    audit.refresh_from_db()
    admin_client.post(url("shadows", audit), {"version": old, "percent": 50, "count": 10}, follow=True)
    shadow = audit.shadows.get()
    assert shadow.version == old

    promoted = admin_client.post(url("shadow_promote", audit, shadow.pk), follow=True)

    audit.refresh_from_db()
    assert said(promoted) == [f"Shadow {shadow.pk} promoted as version {audit.config_version}."]
    assert HookConfig.objects.get(stash=audit, label="No spam").params["words"] == ["spam"]


def test_bad_input_is_shown_on_the_form(admin_client, audit):
    response = admin_client.post(url("shadows", audit), {"version": 1, "percent": 0, "count": 10})

    assert response.status_code == 400
    assert "Must be from 1 to 100" in response.content.decode()
    processing.start_shadow(audit, version=1, percent=5, count=5)
    again = admin_client.post(url("shadows", audit), {"version": 1, "percent": 5, "count": 10})
    assert "A shadow of audit is running" in again.content.decode()
    assert audit.shadows.count() == 1


def test_a_viewer_sees_shadows_but_may_not_start_stop_or_promote_one(django_user_model, audit):
    client = staff(django_user_model, "viewer", *VIEWER)
    shadow = processing.start_shadow(audit, version=1, percent=5, count=5)

    listing = client.get(url("shadows", audit))
    assert listing.status_code == 200 and "Start the shadow" not in listing.content.decode()
    assert "Promote" not in client.get(url("shadow", audit, shadow.pk)).content.decode()
    assert client.post(url("shadows", audit), {"version": 1, "percent": 5, "count": 5}).status_code == 403
    assert client.post(url("shadow_stop", audit, shadow.pk)).status_code == 403
    assert client.post(url("shadow_promote", audit, shadow.pk)).status_code == 403
    editor = staff(django_user_model, "editor", *EDITOR)
    assert "Start the shadow" in editor.get(url("shadows", audit)).content.decode()
    assert client.get(url("shadow", audit, shadow.pk + 1)).status_code == 404


def test_a_shadow_of_the_simulate_pages_draft(admin_client, audit):
    rows = rows_of(audit)
    rows[1]["params"] = {"words": ["spam", "eggs"]}
    rows.append({"hook": "max_size", "label": "Tiny", "params": {"max_bytes": 100}, "position": ""})
    simulated = admin_client.post(url("simulate", audit), draft_post(audit, rows))
    page = simulated.content.decode()
    assert 'action="' + url("shadows", audit) + '" id="shadow-draft"' in page

    started = admin_client.post(
        url("shadows", audit), {**draft_post(audit, rows), "percent": 20, "count": 50}, follow=True
    )

    shadow = audit.shadows.get()
    assert said(started) == [f"Shadow {shadow.pk} started."]
    assert (shadow.version, shadow.percent, shadow.count) == (None, 20, 50)
    hooks = shadow.document["hooks"]
    assert [(hook.get("id"), hook["label"] or hook["hook"]) for hook in hooks] == [
        *((row["id"], row["label"]) for row in rows[:2]),
        (None, "Tiny"),
    ]
    assert hooks[1]["params"]["words"] == ["spam", "eggs"]
    assert HookConfig.objects.get(stash=audit, label="No spam").params["words"] == ["spam"]  # nothing saved


def test_a_draft_that_a_save_would_refuse_starts_nothing(admin_client, audit):
    rows = rows_of(audit)
    rows[1]["params"] = {"words": "spam"}

    response = admin_client.post(url("shadows", audit), {**draft_post(audit, rows), "percent": 20, "count": 50})

    assert response.status_code == 400 and "words: Must be a list." in response.content.decode()
    assert not audit.shadows.exists()
