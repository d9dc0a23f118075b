"""Replay of hooks not saved: a draft from the stash page, and a pipeline file; and the upload's preview diff."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from stash import processing
from stash.models import Content, HookConfig, PipelineRun

from .test_admin import HOOKS, change_url, judge, rows_of, staff, stash_post
from .test_admin_pipelines import EDITOR, upload, url
from .test_admin_views import counters, replay_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", hooks=HOOKS)


def snapshot():
    """What a replay must leave as it was: the hooks, their counters, the items' verdicts, the runs."""
    hooks = list(HookConfig.objects.order_by("pk").values_list("hook", "params", "enabled", "position"))
    return hooks, counters(), list(Content.objects.order_by("pk").values_list("status")), PipelineRun.objects.count()


def draft_post(stash, rows, **fields):
    """The stash page as its "Replay these hooks (unsaved)" button posts it."""
    return {**stash_post(stash, rows), "_draft": "Replay these hooks (unsaved)", **fields}


def file(document, name="edited-pipeline.json"):
    return SimpleUploadedFile(name, json.dumps(document).encode())


def blocking_scam(stash):
    """The stash's export with the blocklist blocking "scam" instead of "spam"."""
    document = processing.export_document(stash)
    document["hooks"][1]["params"] = {"words": ["scam"]}
    return document


@pytest.fixture
def items(audit):
    return {text: judge(audit, text=text) for text in ("spam", "a scam", "fine")}


def test_the_stash_page_has_a_replay_button_for_the_draft(admin_client, audit):
    page = admin_client.get(change_url(audit)).content.decode()
    assert f'name="_draft" value="Replay these hooks (unsaved)"\n           formaction="{replay_url(audit)}"' in page


def test_a_draft_replays_the_hooks_as_edited_against_the_recorded_verdicts_and_saves_nothing(
    admin_client, audit, items
):
    rows = rows_of(audit)
    rows[1]["params"] = {"words": ["scam"]}
    before = snapshot()
    response = admin_client.post(replay_url(audit), draft_post(audit, rows))
    assert response.status_code == 200
    assert response.context["draft"].valid
    changes = {c.content.pk: (c.before, c.result.verdict) for c in response.context["report"].changes}
    assert changes == {items["spam"].pk: ("rejected", "accepted"), items["a scam"].pk: ("accepted", "rejected")}
    page = response.content.decode()
    assert "Draft hooks (not saved)" in page
    assert "Of the latest 3 items, the draft hooks would newly reject 1, would newly accept 1" in page
    assert 'id="judge-again"' not in page  # judging again would record the current hooks' verdicts
    # The draft rides along with the next replay, with this page's own field.
    assert '<input type="hidden" name="hooks-1-params" value="{&quot;words&quot;: [&quot;scam&quot;]}">' in page
    again = admin_client.post(replay_url(audit), {**draft_post(audit, rows), "last_n": 1})
    assert again.context["report"].compared == 1 and again.context["draft"].valid
    assert snapshot() == before


def test_a_draft_a_save_would_refuse_replays_nothing(admin_client, audit, items):
    rows = rows_of(audit)
    rows[1]["params"] = {"words": "scam"}  # not a list
    response = admin_client.post(replay_url(audit), draft_post(audit, rows))
    assert response.context["report"] is None and not response.context["draft"].valid
    assert "A save would refuse these hooks, so nothing was run." in response.content.decode()


def test_a_pipeline_file_replays_its_hooks_and_keeps_the_file_for_the_next_replay(admin_client, audit, items):
    before = snapshot()
    response = admin_client.post(replay_url(audit), {"last_n": 10, "file": file(blocking_scam(audit))})
    assert response.status_code == 200
    changes = {c.content.pk: (c.before, c.result.verdict) for c in response.context["report"].changes}
    assert changes == {items["spam"].pk: ("rejected", "accepted"), items["a scam"].pk: ("accepted", "rejected")}
    page = response.content.decode()
    assert "Hooks of edited-pipeline.json (not saved)" in page
    assert "Of the latest 3 items, the hooks of edited-pipeline.json would newly reject 1" in page
    assert 'id="judge-again"' not in page
    assert '<input type="hidden" name="document_name" value="edited-pipeline.json">' in page
    again = admin_client.post(
        replay_url(audit),
        {"last_n": 2, "document": response.context["document"], "document_name": "edited-pipeline.json"},
    )
    assert again.context["report"].compared == 2 and again.context["replayed"] == "the hooks of edited-pipeline.json"
    assert snapshot() == before


def test_a_bad_pipeline_file_is_refused_on_the_file_field(admin_client, audit, items):
    document = blocking_scam(audit)
    document["hooks"][0]["hook"] = "no_such_hook"
    for sent, error in [
        (file(document), "no_such_hook"),
        (SimpleUploadedFile("x.json", b"{not json"), "This file is not JSON"),
    ]:
        response = admin_client.post(replay_url(audit), {"last_n": 10, "file": sent})
        assert response.status_code == 200 and response.context["report"] is None
        assert any(error in message for message in response.context["form"].errors["file"])


def test_replaying_a_file_needs_the_permission_to_change_the_hooks(django_user_model, audit, items):
    viewer = staff(django_user_model, "viewer", "view_stash")
    assert viewer.post(replay_url(audit), {"last_n": 10, "file": file(blocking_scam(audit))}).status_code == 403
    assert viewer.post(replay_url(audit), {"last_n": 10}).context["report"].compared == 3  # the current hooks


def test_the_upload_preview_names_the_file_shows_the_diff_and_offers_a_replay(django_user_model, audit, items):
    client = staff(django_user_model, "editor", *EDITOR)
    document = blocking_scam(audit)
    preview = client.post(url("upload", audit), {"file": file(document)})
    page = preview.content.decode()
    assert "What edited-pipeline.json would change" in page
    lines = preview.context["lines"]
    assert ("file", "", f"--- version {audit.config_version}") in lines
    assert ("file", "", "+++ edited-pipeline.json") in lines
    assert ("removed", "removed:", '-          "spam"') in lines and ("added", "added:", '+          "scam"') in lines
    assert '<span class="stash-diff-added"><span class="visually-hidden">added: </span>+' in page
    assert f'action="{replay_url(audit)}" target="_blank" id="replay-file"' in page
    # The replay button sends the file's document and name as the preview holds them.
    replayed = client.post(
        replay_url(audit),
        {
            "document": preview.context["apply_form"]["document"].value(),
            "document_name": preview.context["apply_form"]["name"].value(),
        },
    )
    assert replayed.context["report"].compared == 3 and len(replayed.context["report"].changes) == 2


def test_the_preview_shown_again_after_a_change_keeps_the_files_name(django_user_model, audit):
    client = staff(django_user_model, "editor", *EDITOR)
    preview = upload(client, audit, blocking_scam(audit))
    form = preview.context["apply_form"]
    size = HookConfig.objects.get(hook="max_size")
    size.params = {"max_bytes": 2000}
    size.save()  # another change meanwhile: a new version
    again = client.post(
        url("upload", audit),
        {
            "document": form["document"].value(),
            "name": form["name"].value(),
            "version": form["version"].value(),
            "_apply": "Apply this pipeline",
        },
    )
    assert "What pipeline.json would change" in again.content.decode()
