"""The pipeline commands: stash_pipeline export|import and stash_test."""

import io
import json
import re

import pytest
from django.core.management import CommandError, ManagementUtility, call_command

from stash import processing
from stash.core import documents
from stash.models import Example, HookConfig, PipelineVersion, Stash

pytestmark = pytest.mark.django_db


def run(*args):
    """Call a command; return its standard output."""
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), no_color=True)
    return out.getvalue()


@pytest.fixture
def audit(make_stash):
    stash = make_stash(
        "audit",
        hooks=[
            {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
            {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
        ],
    )
    Example.objects.create(
        stash=stash,
        name="spam",
        payload={"text": "buy spam"},
        verdict="rejected",
        reason_code="blocked_word",
        hook="No spam",
    )
    Example.objects.create(stash=stash, name="plain", payload={"text": "hello"}, verdict="accepted")
    return stash


@pytest.fixture
def exported(audit, tmp_path):
    """The file ``stash_pipeline export audit -o`` wrote."""
    path = tmp_path / "audit.json"
    assert run("stash_pipeline", "export", "audit", "-o", str(path)) == f"The pipeline of audit written to {path}.\n"
    return path


def state(slug="audit"):
    """What an import could change: the stash's version, how many versions, its hooks and examples."""
    stash = Stash.objects.get(slug=slug)
    return (
        stash.config_version,
        stash.versions.count(),
        list(stash.hooks.in_order().values_list("hook", "label", "params")),
        list(stash.examples.values_list("name", "verdict")),
    )


def edited(path, change):
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    return path


# --- export ----------------------------------------------------------------------------------


def test_export_prints_the_document_as_indented_json(audit):
    out = run("stash_pipeline", "export", "audit")
    assert out == documents.dumps(processing.export_document(audit)) + "\n"
    document = json.loads(out)
    assert [hook["label"] for hook in document["hooks"]] == ["Needs text", "No spam"]
    assert [example["name"] for example in document["examples"]] == ["plain", "spam"]


def test_export_leaves_out_secrets(audit):
    HookConfig.objects.create(
        stash=audit, hook="webhook", params={"url": "https://example.com/in", "secret": "s3cret-s3cret-s3cret"}
    )
    out = run("stash_pipeline", "export", "audit")
    assert "s3cret" not in out
    assert json.loads(out)["hooks"][2]["params"] == {"url": "https://example.com/in"}


def test_export_of_an_unknown_stash_fails():
    with pytest.raises(CommandError, match=r"^No stash with slug 'nope'\.$"):
        run("stash_pipeline", "export", "nope")


def test_a_subcommand_is_required():
    with pytest.raises(CommandError, match=r"the following arguments are required: \{export,import\}"):
        run("stash_pipeline")


# --- import ----------------------------------------------------------------------------------


def test_an_exported_pipeline_imports_into_a_new_stash(audit, exported):
    out = run("stash_pipeline", "import", str(exported), "--stash", "copy")
    copy = Stash.objects.get(slug="copy")
    lines = out.splitlines()
    assert lines[0] == "new stash copy"
    assert "added Needs text" in lines and "added No spam" in lines
    assert "example plain: passed" in lines and "example spam: passed" in lines
    assert lines[-1] == f"applied as version {copy.config_version}"
    assert state("copy")[2:] == state("audit")[2:]
    exported_again = json.loads(run("stash_pipeline", "export", "copy"))
    original = json.loads(exported.read_text())
    assert exported_again["stash"].pop("slug") == "copy" and original["stash"].pop("slug") == "audit"
    assert exported_again == original


def test_import_goes_to_the_documents_stash_by_default(audit, exported):
    edited(exported, lambda document: document["hooks"][1]["params"].update(words=["spam", "scam"]))
    out = run("stash_pipeline", "import", str(exported))
    assert out.splitlines()[0] == "No spam: params changed"
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "scam"]}
    assert PipelineVersion.objects.filter(stash=audit).first().summary == "import: No spam: params changed"


def test_import_reads_standard_input(audit, exported, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(exported.read_text()))
    before = state()
    assert run("stash_pipeline", "import", "-").splitlines() == [
        "no change",
        "example plain: passed",
        "example spam: passed",
        f"nothing to apply: audit stays at version {before[0]}",
    ]
    assert state() == before


def test_a_dry_run_says_what_would_change_and_changes_nothing(audit, exported):
    edited(exported, lambda document: document["hooks"].pop(0))
    before = state()
    out = run("stash_pipeline", "import", str(exported), "--dry-run")
    assert out.splitlines() == [
        "removed Needs text",
        "example plain: passed",
        "example spam: passed",
        "dry run: nothing changed",
    ]
    assert state() == before
    run("stash_pipeline", "import", str(exported), "--stash", "fresh", "--dry-run")
    assert not Stash.objects.filter(slug="fresh").exists()


def test_a_bad_hook_is_refused_naming_hook_and_field_and_nothing_changes(audit, exported):
    def spoil(document):
        document["hooks"][1]["params"] = {"words": "spam"}
        document["hooks"][0]["condition"] = "__import__('os')"

    edited(exported, spoil)
    before = state()
    with pytest.raises(CommandError) as refused:
        run("stash_pipeline", "import", str(exported))
    lines = str(refused.value).splitlines()
    assert lines[0] == "The pipeline document cannot be imported; nothing was changed:"
    assert any(line.startswith("  hooks[0].condition: Needs text (require_fields): ") for line in lines)
    assert any(line.startswith("  hooks[1].params: No spam (keyword_blocklist): Invalid params") for line in lines)
    assert state() == before


def test_a_change_that_breaks_an_example_is_refused_listing_it(audit, exported):
    edited(exported, lambda document: document["hooks"].pop(1))
    before = state()
    with pytest.raises(CommandError) as refused:
        run("stash_pipeline", "import", str(exported))
    assert str(refused.value).splitlines() == [
        "This change breaks 1 golden example(s) of audit, which refuses such changes; nothing was changed:",
        (
            "  spam: expected rejected, got accepted; expected reason code 'blocked_word', got none; "
            "expected 'No spam' to decide, but no hook decided"
        ),
    ]
    assert state() == before


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"format": ', r"^The document is not valid JSON: Expecting value at line 1, column 12\.$"),
        ("[]", r"document: A pipeline document is a JSON object\."),
        (
            '{"format": "stash.pipeline", "format_version": 2, "stash": {"slug": "audit"}, "hooks": {}}',
            r"(?s)format_version: This server reads format version 1\..*hooks: Must be a list of hooks\.",
        ),
    ],
)
def test_a_malformed_document_is_refused(audit, tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    before = state()
    with pytest.raises(CommandError, match=message):
        run("stash_pipeline", "import", str(path), "--stash", "audit")
    assert state() == before


def test_an_unreadable_file_is_refused(tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(CommandError, match=rf"^Cannot read {re.escape(str(missing))}: No such file or directory\.$"):
        run("stash_pipeline", "import", str(missing))


def test_a_document_that_names_no_stash_needs_one(audit, exported):
    edited(exported, lambda document: document.pop("stash"))
    with pytest.raises(CommandError, match=r"names no stash \(stash\.slug\): say which with --stash"):
        run("stash_pipeline", "import", str(exported))


# --- stash_test ------------------------------------------------------------------------------


def test_stash_test_passes_when_every_example_passes(audit, make_stash):
    make_stash("empty")
    assert run("stash_test").splitlines() == [
        "PASS  audit: plain",
        "PASS  audit: spam",
        "2 example(s): 2 passed, 0 failed",
    ]
    assert run("stash_test", "empty").splitlines() == ["empty: no golden examples", "0 example(s): 0 passed, 0 failed"]


def test_stash_test_fails_on_a_broken_example_and_passes_once_it_is_fixed(audit):
    Example.objects.create(stash=audit, name="scam", payload={"text": "a scam"}, verdict="rejected")
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"^3 example\(s\): 2 passed, 1 failed$"):
        call_command("stash_test", "audit", stdout=out, no_color=True)
    assert "FAIL  audit: scam: expected rejected, got accepted" in out.getvalue().splitlines()

    blocklist = audit.hooks.get(label="No spam")
    blocklist.params = {"words": ["spam", "scam"]}
    blocklist.save()
    assert run("stash_test", "audit").splitlines()[-1] == "3 example(s): 3 passed, 0 failed"


def test_stash_test_exits_with_a_non_zero_status_from_the_command_line(audit, capsys):
    Example.objects.filter(name="plain").update(verdict="held")
    with pytest.raises(SystemExit) as exit:
        ManagementUtility(["manage.py", "stash_test", "audit", "--no-color"]).execute()
    assert exit.value.code == 1
    assert "CommandError: 2 example(s): 1 passed, 1 failed" in capsys.readouterr().err


def test_stash_test_refuses_an_unknown_stash(audit):
    with pytest.raises(CommandError, match=r"^No stash with slug 'nope'\.$"):
        run("stash_test", "audit", "nope")


def test_stash_test_against_a_document_changes_nothing(audit, exported):
    edited(exported, lambda document: document["hooks"].pop(1))
    before = state()
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"^2 example\(s\): 1 passed, 1 failed$"):
        call_command("stash_test", "--pipeline", str(exported), stdout=out, no_color=True)
    assert out.getvalue().splitlines()[1].startswith("FAIL  audit: spam: expected rejected, got accepted")
    assert state() == before


def test_stash_test_runs_the_stashs_examples_and_the_documents_own(audit, exported):
    def change(document):
        document["examples"] = [
            {"name": "scam", "payload": {"text": "scam"}, "verdict": "rejected"},
            {"name": "plain", "payload": {"text": "hello"}, "verdict": "accepted"},
        ]
        document["hooks"][1]["params"] = {"words": ["spam", "scam"]}

    edited(exported, change)
    assert run("stash_test", "audit", "--pipeline", str(exported)).splitlines() == [
        "PASS  audit: plain",
        "PASS  audit: spam",
        "PASS  audit (document): scam",
        "3 example(s): 3 passed, 0 failed",
    ]


def test_stash_test_against_a_document_tests_one_stash(audit, exported, make_stash):
    make_stash("other")
    with pytest.raises(CommandError, match=r"^--pipeline tests one stash"):
        run("stash_test", "audit", "other", "--pipeline", str(exported))
    with pytest.raises(CommandError, match=r"^No stash with slug 'nope'\.$"):
        run("stash_test", "nope", "--pipeline", str(exported))
