"""stash_shadow start|status|stop|promote."""

import io
import json
import pathlib

import pytest
from django.core.management import CommandError, call_command

from stash import processing
from stash.models import PipelineVersion, Shadow

from ..support.shadows import run_shadow_messages, save_and_judge

pytestmark = pytest.mark.django_db


def run(*args):
    out = io.StringIO()
    call_command("stash_shadow", *args, stdout=out, stderr=io.StringIO(), no_color=True)
    return out.getvalue()


@pytest.fixture
def audit(make_stash):
    return make_stash(
        "audit", hooks=[("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]
    )


@pytest.fixture
def draft_file(audit, tmp_path):
    document = processing.export_document(audit)
    document["hooks"][1]["params"]["words"] = ["spam", "eggs"]
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_start_status_stop(audit, draft_file, broker, django_capture_on_commit_callbacks):
    said = run("start", "audit", "--document", draft_file, "--percent", "100", "--count", "10")
    assert "shadow" in said and "a draft on 100% of live saves, until 10 items" in said

    save_and_judge(audit, [{"text": "eggs"}], django_capture_on_commit_callbacks)
    assert run_shadow_messages(broker) == 0  # judged by the live worker: no message carries an item

    status = run("status", "audit")
    assert "running" in status and "items 1, agreed 0, disagreed 1" in status
    assert "accepted/rejected" in status
    assert "decided live by (none), in the shadow by keyword_blocklist: 1" in status
    assert json.loads(run("status", "audit", "--json"))["report"]["matrix"] == {"accepted/rejected": 1}

    assert "stopped after 1 items" in run("stop", "audit")
    with pytest.raises(CommandError, match="audit has no running shadow"):
        run("stop", "audit")


def test_start_from_a_version_and_promote(audit, draft_file):
    processing.import_document(audit, json.loads(pathlib.Path(draft_file).read_text()))
    audit.refresh_from_db()
    run("start", "audit", "--version", "1", "--percent", "20", "--minutes", "60")
    versions = PipelineVersion.objects.filter(stash=audit).count()

    said = run("promote", "audit")

    assert f"promoted as version {versions + 1}" in said
    assert PipelineVersion.objects.filter(stash=audit).count() == versions + 1
    assert Shadow.objects.get().status == "promoted"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--version", "1", "--percent", "0", "--count", "5"], "--percent: Must be from 1 to 100"),
        (["--version", "1", "--percent", "5", "--count", "0"], "--count: Must be from 1 to"),
        (["--version", "1", "--percent", "5"], "--count: Give a count of items"),
        (["--version", "9", "--percent", "5", "--count", "5"], "--version: audit has no version 9"),
        (["--document", "/no/such/file.json", "--percent", "5", "--count", "5"], "Cannot read /no/such/file.json"),
    ],
)
def test_bad_input_is_a_command_error(audit, args, message):
    with pytest.raises(CommandError, match=message):
        run("start", "audit", *args)
    assert not Shadow.objects.exists()


def test_a_second_shadow_and_an_unknown_stash_are_refused(audit):
    run("start", "audit", "--version", "1", "--percent", "5", "--count", "5")
    with pytest.raises(CommandError, match="A shadow of audit is running"):
        run("start", "audit", "--version", "1", "--percent", "5", "--count", "5")
    with pytest.raises(CommandError, match="No stash with slug 'nope'"):
        run("status", "nope")


def test_a_broken_document_names_its_fault(audit, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "stash.pipeline", "format_version": 1, "hooks": [{"hook": "nope"}]}))
    with pytest.raises(CommandError, match=r"hooks\[0\]\.hook"):
        run("start", "audit", "--document", str(path), "--percent", "5", "--count", "5")


def test_status_of_a_stash_without_shadows(audit):
    assert run("status", "audit").strip() == "audit has no shadow."
