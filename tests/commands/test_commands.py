"""The management commands: stash_hooks, stash_demo, stash_simulate, stash_reprocess, stash_sweep."""

import io
import json
import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from stash import processing
from stash.core import registry
from stash.models import Content, HookConfig, PipelineRun, Stash


def run(*args, **options):
    """Call a command; return (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err, no_color=True, **options)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def sent(monkeypatch):
    """Ids handed to the broker (the publishing boundary)."""
    ids = []
    monkeypatch.setattr(
        processing.publishing, "send", lambda batch, stash=None, queue="": ids.extend(str(pk) for pk in batch)
    )
    return ids


# --- stash_hooks -----------------------------------------------------------------------------


def test_stash_hooks_lists_the_built_in_hooks_with_kind_and_description():
    out, err = run("stash_hooks")
    lines = out.splitlines()
    assert err == ""
    for name in ("require_fields", "keyword_blocklist", "max_size"):
        [line] = [line for line in lines if line.split()[0] == name]
        assert re.fullmatch(rf"{name}\s+filter\s+{re.escape(registry.get(name).description())}", line), line
    assert any(
        line.startswith("require_fields ") and "Drop content whose payload lacks any of the given fields" in line
        for line in lines
    )
    assert any("keyword_blocklist" in line and "blocked word or phrase" in line for line in lines)
    assert any("max_size" in line and "larger than max_bytes" in line for line in lines)
    # Sorted by name, one line per registered hook.
    assert [line.split()[0] for line in lines] == sorted(h.name for h in registry.all())


def test_stash_hooks_json_gives_name_kind_description_and_params_schema():
    out, _ = run("stash_hooks", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["max_size"] == {
        "name": "max_size",
        "kind": "filter",
        "description": "Drop content whose JSON payload is larger than max_bytes.",
        "params_schema": registry.get("max_size").params_schema,
    }
    assert rows["require_fields"]["params_schema"]["required"] == ["fields"]
    assert rows["keyword_blocklist"]["params_schema"]["properties"]["words"]["type"] == "array"
    assert set(rows) == {h.name for h in registry.all()}


def test_stash_hooks_shows_hooks_registered_at_run_time(register_temporarily):
    from stash import hooks

    class Shout(hooks.Transform):
        """Uppercase every text."""

    register_temporarily("test_shout", Shout)
    out, _ = run("stash_hooks")
    assert re.search(r"^test_shout\s+transform\s+Uppercase every text\.$", out, re.MULTILINE)


# --- stash_demo ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_stash_demo_creates_the_audit_stash_its_hooks_and_a_login(client):
    out, _ = run("stash_demo")
    assert 'Demo stash "audit" with 3 hooks.' in out
    assert "Demo login: admin / admin" in out

    stash = Stash.objects.get(slug="audit")
    assert list(stash.hooks.in_order().values_list("position", "hook", "label", "enabled")) == [
        (1, "require_fields", "Needs text", True),
        (2, "keyword_blocklist", "No spam", True),
        (3, "max_size", "At most 64 KB", True),
    ]
    user = get_user_model().objects.get()
    assert (user.username, user.is_staff, user.is_superuser) == ("admin", True, True)
    assert client.login(username="admin", password="admin")
    assert client.get("/admin/").status_code == 200


def judged_by_the_demo(text):
    """An item of the demo stash, judged (rejected by "No spam" for a spammy text)."""
    item = Content.objects.create(stash=Stash.objects.get(slug="audit"), payload={"text": text})
    processing.judge([item.pk])
    return Content.objects.get(pk=item.pk)


@pytest.mark.django_db
def test_stash_demo_leaves_an_existing_demo_stash_as_the_operator_left_it(sent):
    run("stash_demo")
    item = judged_by_the_demo("free money")
    assert item.status == "rejected" and item.decided_by.label == "No spam"
    HookConfig.objects.filter(hook="max_size").update(enabled=False, label="Edited")
    Stash.objects.filter(slug="audit").update(description="Ours now")
    hooks_before = list(HookConfig.objects.in_order().values())
    version = Stash.objects.get(slug="audit").config_version
    admin = get_user_model().objects.get(username="admin")
    admin.set_password("changed-by-the-operator")
    admin.save()

    out, _ = run("stash_demo")  # what every `make run` does

    assert 'Demo stash "audit" exists (3 hooks): left as it is (stash_demo --reset resets it).' in out
    assert 'Demo login "admin" exists: left as it is (stash_demo --reset sets its password again).' in out
    assert get_user_model().objects.get(username="admin").check_password("changed-by-the-operator")
    assert list(HookConfig.objects.in_order().values()) == hooks_before  # same ids, labels, counters
    assert HookConfig.objects.get(label="No spam").dropped_count == 1
    stash = Stash.objects.get(slug="audit")
    assert (stash.description, stash.config_version) == ("Ours now", version)
    item = Content.objects.get(pk=item.pk)
    assert (item.status, item.decided_by.label) == ("rejected", "No spam")
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_stash_demo_reset_puts_the_demo_back_and_keeps_the_items(sent):
    run("stash_demo")
    item = judged_by_the_demo("free money")
    HookConfig.objects.filter(hook="max_size").update(enabled=False, label="Edited")
    HookConfig.objects.create(stash=item.stash, hook="max_size", params={"max_bytes": 5}, label="Extra")
    Stash.objects.filter(slug="audit").update(description="Ours now")
    get_user_model().objects.filter(username="admin").update(password="!")

    out, _ = run("stash_demo", "--reset")

    assert 'Demo stash "audit" reset: 3 hooks, as the demo defines them.' in out
    assert "Demo login: admin / admin" in out
    assert get_user_model().objects.get(username="admin").check_password("admin")
    assert Stash.objects.filter(slug="audit").count() == 1
    assert Stash.objects.get(slug="audit").description == "Demo stash: text required, no spam, 64 KB at most."
    assert list(HookConfig.objects.in_order().values_list("position", "hook", "label", "enabled", "dropped_count")) == [
        (1, "require_fields", "Needs text", True, 0),
        (2, "keyword_blocklist", "No spam", True, 0),
        (3, "max_size", "At most 64 KB", True, 0),
    ]
    item = Content.objects.get(pk=item.pk)
    assert (item.status, item.decided_by) == ("rejected", None)


def test_stash_demo_says_how_to_reset_in_its_help():
    from stash.management.commands.stash_demo import Command

    out = Command().create_parser("manage.py", "stash_demo").format_help()
    assert "--reset" in out and "left as it is" in " ".join(out.split())


@pytest.mark.django_db
def test_stash_demo_takes_another_login(client):
    out, _ = run("stash_demo", "--username", "demo", "--password", "s3cret-demo")
    assert "Demo login: demo / s3cret-demo" in out
    assert client.login(username="demo", password="s3cret-demo")
    assert not client.login(username="demo", password="admin")


# --- stash_simulate --------------------------------------------------------------------------


@pytest.fixture
def demo(db):
    from stash.management.demo import create_demo

    return create_demo()


def assert_nothing_saved():
    assert Content.objects.count() == 0
    assert PipelineRun.objects.count() == 0
    assert (
        list(
            HookConfig.objects.values_list("runs_count", "kept_count", "dropped_count", "errors_count", "time_total_us")
        )
        == [(0, 0, 0, 0, 0)] * 3
    )


def test_stash_simulate_prints_the_trail_and_verdict_and_saves_nothing(demo, tmp_path):
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"text": "Get FREE MONEY now"}))
    out, _ = run("stash_simulate", "audit", str(payload))
    lines = out.splitlines()
    assert len(lines) == 3
    assert re.fullmatch(r"\s*1  Needs text\s+kept\s+[\d.]+ ms\s*", lines[0]), lines[0]
    assert re.fullmatch(r"\s*2  No spam\s+dropped\s+[\d.]+ ms  contains blocked word 'free money' in text", lines[1]), (
        lines[1]
    )
    assert lines[2] == "verdict: rejected (contains blocked word 'free money' in text)"
    assert_nothing_saved()


def test_stash_simulate_reads_stdin(demo, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"text": "hello there"}'))
    out, _ = run("stash_simulate", "audit", "-")
    assert [line.split()[:3] for line in out.splitlines()[:3]] == [
        ["1", "Needs", "text"],
        ["2", "No", "spam"],
        ["3", "At", "most"],
    ]
    assert all(" kept " in line for line in out.splitlines()[:3])
    assert out.splitlines()[-1] == "verdict: accepted"
    assert_nothing_saved()


def test_stash_simulate_json(demo, tmp_path):
    payload = tmp_path / "payload.json"
    payload.write_text('{"title": "no text"}')
    out, _ = run("stash_simulate", "audit", str(payload), "--json")
    result = json.loads(out)
    assert (result["verdict"], result["reason"]) == ("rejected", "missing text")
    assert [(e["position"], e["hook"], e["outcome"]) for e in result["trail"]] == [(1, "require_fields", "dropped")]
    # The API's shape: the hook that decided, the payload after transforms, the time taken.
    assert result["decided_by"] == result["trail"][0]["config_id"] and result["transformed"] is False
    assert result["payload"] == {"title": "no text"} and result["duration_ms"] >= 0
    assert_nothing_saved()


def test_stash_simulate_verbose_runs_every_hook_marks_the_decider_and_prints_transformed_payloads(demo, tmp_path):
    HookConfig.objects.create(stash=demo, hook="normalize_text", label="Lower", params={"lowercase": True})
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"text": "Get FREE MONEY now"}))
    out, _ = run("stash_simulate", "audit", str(payload), "--verbose")
    lines = out.splitlines()
    assert len(lines) == 6, out
    assert re.fullmatch(
        r"\s*2  No spam\s+dropped\s+[\d.]+ ms  contains blocked word 'free money' in text"
        r"  \[decided the run\]",
        lines[1],
    ), lines[1]
    assert re.fullmatch(
        r"\s*3  At most 64 KB\s+kept\s+[\d.]+ ms\s+\[after the verdict: ran for --verbose only\]", lines[2]
    ), lines[2]
    assert re.fullmatch(r"\s*4  Lower\s+transformed\s+[\d.]+ ms  changed text  \[after the verdict: .*\]", lines[3]), (
        lines[3]
    )
    assert lines[4] == '     payload: {"text": "get free money now"}'
    assert lines[5] == "verdict: rejected (contains blocked word 'free money' in text)"
    assert Content.objects.count() == 0 and PipelineRun.objects.count() == 0


def test_stash_simulate_verbose_json_carries_the_marks_and_payloads(demo, tmp_path):
    payload = tmp_path / "payload.json"
    payload.write_text('{"title": "no text"}')
    result = json.loads(run("stash_simulate", "audit", str(payload), "--json", "--verbose")[0])
    assert result["verbose"] is True and result["verdict"] == "rejected"
    assert [(e["outcome"], e["stopped"], e["after_stop"]) for e in result["trail"]] == [
        ("dropped", True, False),
        ("kept", False, True),
        ("kept", False, True),
    ]
    assert_nothing_saved()


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"text": "hi",\n "n": }', r"The payload is not valid JSON: Expecting value at line 2, column 7\."),
        ("{'text': 'hi'}", r"not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2\."),
        ("", r"not valid JSON: Expecting value at line 1, column 1\."),
    ],
)
def test_stash_simulate_refuses_malformed_json_with_line_and_column(demo, tmp_path, text, message):
    payload = tmp_path / "bad.json"
    payload.write_text(text)
    with pytest.raises(CommandError, match=message):
        run("stash_simulate", "audit", str(payload))
    assert_nothing_saved()


@pytest.mark.parametrize("text, kind", [("[1, 2]", "list"), ('"text"', "str"), ("null", "NoneType"), ("3", "int")])
def test_stash_simulate_refuses_json_that_is_not_an_object(demo, monkeypatch, text, kind):
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    with pytest.raises(CommandError, match=rf"^The payload must be a JSON object, not {kind}\.$"):
        run("stash_simulate", "audit", "-")


def test_stash_simulate_refuses_a_payload_over_the_stash_limit(demo, tmp_path):
    Stash.objects.filter(pk=demo.pk).update(max_payload_bytes=10)
    payload = tmp_path / "big.json"
    payload.write_text('{"text": "more than ten bytes"}')
    with pytest.raises(CommandError, match=r"The payload is 30 bytes; this stash takes at most 10\."):
        run("stash_simulate", "audit", str(payload))


def test_stash_simulate_refuses_an_unknown_stash(demo, tmp_path):
    payload = tmp_path / "payload.json"
    payload.write_text('{"text": "hi"}')
    with pytest.raises(CommandError, match=r"^No stash with slug 'nope'\.$"):
        run("stash_simulate", "nope", str(payload))


def test_stash_simulate_refuses_a_missing_file(demo, tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(CommandError, match=rf"^Cannot read {re.escape(str(missing))}: No such file or directory\.$"):
        run("stash_simulate", "audit", str(missing))


def test_stash_simulate_refuses_a_directory(demo, tmp_path):
    with pytest.raises(CommandError, match=rf"^Cannot read {re.escape(str(tmp_path))}: Is a directory\.$"):
        run("stash_simulate", "audit", str(tmp_path))


# --- stash_reprocess -------------------------------------------------------------------------


@pytest.fixture
def judged(make_stash, sent):
    """Two stashes with judged items: audit has one accepted and two rejected, other one accepted.

    The tests that reprocess commit (``transaction=True``), so what they publish is theirs alone.
    """
    audit = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    other = make_stash("other", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    items = {
        "ok": Content.objects.create(stash=audit, payload={"text": "fine"}),
        "spam1": Content.objects.create(stash=audit, payload={"text": "spam"}),
        "spam2": Content.objects.create(stash=audit, payload={"text": "more spam"}),
        "other": Content.objects.create(stash=other, payload={"text": "fine"}),
    }
    processing.judge([item.pk for item in items.values()])
    assert dict(Content.objects.values_list("payload__text", "status")) == {
        "fine": "accepted",
        "spam": "rejected",
        "more spam": "rejected",
    }
    sent.clear()
    return items


def statuses(items):
    return {name: Content.objects.get(pk=item.pk).status for name, item in items.items()}


def test_stash_reprocess_needs_a_selector(judged):
    with pytest.raises(CommandError, match=r"^Say which items: ids, --stash and/or --status, or --failure-group\.$"):
        run("stash_reprocess")
    assert set(statuses(judged).values()) == {"accepted", "rejected"}


@pytest.mark.django_db(transaction=True)
def test_stash_reprocess_by_stash(judged, sent):
    out, _ = run("stash_reprocess", "--stash", "audit")
    assert out == "3 item(s) sent to be judged again.\n"
    assert statuses(judged) == {"ok": "pending", "spam1": "pending", "spam2": "pending", "other": "accepted"}
    assert set(sent) == {str(judged[name].pk) for name in ("ok", "spam1", "spam2")}
    reset = Content.objects.get(pk=judged["spam1"].pk)
    assert (reset.reason, reset.attempts, reset.revision) == ("", 0, 1)
    assert reset.lease_until > timezone.now()


@pytest.mark.django_db(transaction=True)
def test_stash_reprocess_by_status(judged, sent):
    out, _ = run("stash_reprocess", "--status", "rejected")
    assert out == "2 item(s) sent to be judged again.\n"
    assert statuses(judged) == {"ok": "accepted", "spam1": "pending", "spam2": "pending", "other": "accepted"}
    assert set(sent) == {str(judged["spam1"].pk), str(judged["spam2"].pk)}


@pytest.mark.django_db(transaction=True)
def test_stash_reprocess_by_stash_and_statuses(judged, sent):
    out, _ = run("stash_reprocess", "--stash", "other", "--status", "accepted", "--status", "rejected")
    assert out == "1 item(s) sent to be judged again.\n"
    assert statuses(judged) == {"ok": "accepted", "spam1": "rejected", "spam2": "rejected", "other": "pending"}
    assert sent == [str(judged["other"].pk)]


@pytest.mark.django_db(transaction=True)
def test_stash_reprocess_by_ids(judged, sent):
    # Ids as pasted: in upper case or without dashes they name the same items.
    ids = [str(judged["ok"].pk), str(judged["other"].pk).upper(), judged["spam1"].pk.hex]
    out, _ = run("stash_reprocess", *ids)
    assert out == "3 item(s) sent to be judged again.\n"
    assert statuses(judged) == {"ok": "pending", "spam1": "pending", "spam2": "rejected", "other": "pending"}
    assert set(sent) == {str(judged[name].pk) for name in ("ok", "other", "spam1")}

    # Judged again, the items get their verdicts back.
    processing.judge(sent)
    assert statuses(judged)["ok"] == "accepted"
    assert Content.objects.get(pk=judged["ok"].pk).runs.count() == 2


def test_stash_reprocess_with_a_filter_that_matches_nothing_reports_zero(judged, sent):
    out, _ = run("stash_reprocess", "--status", "held")
    assert out == "0 item(s) sent to be judged again.\n"


def test_stash_reprocess_refuses_an_unknown_id_and_changes_nothing(judged):
    unknown, other = str(uuid.uuid4()).upper(), str(uuid.uuid4())
    with pytest.raises(CommandError, match=rf"^No such item\(s\): {', '.join(sorted([unknown, other]))}\.$"):
        run("stash_reprocess", str(judged["spam1"].pk), unknown, other)
    assert statuses(judged)["spam1"] == "rejected"


def test_stash_reprocess_refuses_an_id_outside_the_selection(judged):
    with pytest.raises(CommandError, match=rf"^No such item\(s\): {judged['other'].pk}\.$"):
        run("stash_reprocess", "--stash", "audit", str(judged["other"].pk))
    assert statuses(judged)["other"] == "accepted"


def test_stash_reprocess_refuses_a_malformed_id(judged):
    with pytest.raises(CommandError, match=r"^Not an item id: .*not-a-uuid.* is not a valid UUID\.$"):
        run("stash_reprocess", str(judged["ok"].pk), "not-a-uuid")
    assert statuses(judged)["ok"] == "accepted"


def test_stash_reprocess_refuses_an_unknown_stash_or_status(judged):
    with pytest.raises(CommandError, match=r"^No stash with slug 'nope'\.$"):
        run("stash_reprocess", "--stash", "nope")
    with pytest.raises(CommandError, match=r"argument --status: invalid choice: 'done'"):
        run("stash_reprocess", "--status", "done")
    assert set(statuses(judged).values()) == {"accepted", "rejected"}


# --- stash_sweep -----------------------------------------------------------------------------


def test_stash_sweep_prints_the_counts(make_stash, settings, sent, django_capture_on_commit_callbacks):
    stash = make_stash("audit")
    now = timezone.now()
    past, future = now - timedelta(seconds=1), now + timedelta(seconds=60)
    lost, crashed, exhausted, _fresh = Content.objects.bulk_create(
        [
            Content(stash=stash, payload={"text": "1"}, lease_until=past),
            Content(stash=stash, payload={"text": "2"}, status="processing", attempts=1, lease_until=past),
            Content(
                stash=stash,
                payload={"text": "3"},
                status="processing",
                attempts=settings.STASH_MAX_ATTEMPTS,
                lease_until=past,
            ),
            Content(stash=stash, payload={"text": "4"}, lease_until=future),
        ]
    )
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run("stash_sweep")
    assert out == "2 item(s) sent again, 1 failed.\n"
    assert set(sent) == {str(lost.pk), str(crashed.pk)}
    assert Content.objects.get(pk=exhausted.pk).status == "failed"

    out, _ = run("stash_sweep")
    assert out == "0 item(s) sent again, 0 failed.\n"
