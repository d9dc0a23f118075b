"""stash_export: a stash's items as JSON Lines, accepted ones in queue order, streamed."""

import io
import json
import tracemalloc
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from stash import processing
from stash.models import Content, Stash

pytestmark = pytest.mark.django_db

Status = Content.Status
KEYS = ["id", "stash", "status", "payload", "reason", "queue_seq", "revision", "created_at", "processed_at"]


def export(*args):
    """Run stash_export; return (the JSON objects it wrote to stdout, in order)."""
    out = io.StringIO()
    call_command("stash_export", *args, stdout=out, no_color=True)
    text = out.getvalue()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def audit(make_stash):
    """Judged items of "audit" whose acceptance order differs from their creation order."""
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    other = make_stash("other")
    items = {
        name: processing.submit(stash, {"text": text})[0]
        for name, text in [("late", "draft"), ("spam", "spam"), ("early", "accepted first")]
    }
    processing.judge([items["early"].pk])  # a batch takes its stash's other waiting items along
    # Edited after acceptance: it leaves the queue and comes back last, at its new revision.
    processing.edit_payload(Content.objects.get(pk=items["late"].pk), {"text": "accepted second"})
    processing.judge([items["late"].pk])
    processing.submit(other, {"text": "someone else's"})
    processing.judge([Content.objects.get(stash=other).pk])
    items["waiting"] = processing.submit(stash, {"text": "not judged yet"})[0]
    return {name: Content.objects.get(pk=item.pk) for name, item in items.items()}


def test_each_line_is_one_item_with_its_fields_as_the_api_writes_them(audit, admin_client):
    rows = export("audit")

    assert [row["id"] for row in rows] == [str(audit[name].pk) for name in ("late", "spam", "early", "waiting")]
    late = audit["late"]
    api = admin_client.get(f"/api/contents/{late.pk}/").json()
    assert list(rows[0]) == KEYS
    assert rows[0] == {
        "id": str(late.pk),
        "stash": "audit",
        "status": "accepted",
        "payload": {"text": "accepted second"},
        "reason": "",
        "queue_seq": 3,
        "revision": 2,
        "created_at": api["created_at"],
        "processed_at": api["processed_at"],
    }
    assert api["created_at"].endswith("Z") and rows[0]["created_at"] == late.created_at.isoformat()[:-6] + "Z"
    assert rows[1]["status"] == "rejected" and rows[1]["queue_seq"] is None
    assert rows[1]["reason"] == audit["spam"].reason and "spam" in rows[1]["reason"]
    assert rows[3]["status"] == "pending" and rows[3]["processed_at"] is None


def test_accepted_items_come_in_queue_order(audit):
    rows = export("audit", "--status", "accepted")
    assert [(row["queue_seq"], row["payload"]["text"]) for row in rows] == [
        (audit["early"].queue_seq, "accepted first"),
        (3, "accepted second"),
    ]
    assert audit["early"].queue_seq < 3 and audit["early"].created_at > audit["late"].created_at


def test_after_reads_the_queue_from_a_number_on(audit):
    assert [row["queue_seq"] for row in export("audit", "--status", "accepted", "--after", "2")] == [3]
    assert [row["queue_seq"] for row in export("audit", "--after", "2")] == [3]
    assert [row["queue_seq"] for row in export("audit", "--after", "0")] == [audit["early"].queue_seq, 3]
    assert export("audit", "--after", "3") == []


def test_statuses_filter_and_combine(audit):
    assert [row["id"] for row in export("audit", "--status", "rejected")] == [str(audit["spam"].pk)]
    assert [row["status"] for row in export("audit", "--status", "pending", "--status", "rejected")] == [
        "rejected",
        "pending",
    ]
    assert export("audit", "--status", "held") == []


def test_an_edited_item_is_exported_at_its_latest_revision(audit):
    processing.edit_payload(audit["late"], {"text": "changed"})
    [row] = export("audit", "--status", "pending", "--status", "accepted")[:1]
    assert (row["payload"], row["revision"], row["status"], row["queue_seq"]) == (
        {"text": "changed"},
        3,
        "pending",
        None,
    )


def test_output_writes_a_file_and_says_how_many(audit, tmp_path):
    target = tmp_path / "audit.jsonl"
    out = io.StringIO()
    call_command("stash_export", "audit", "--status", "accepted", "--output", str(target), stdout=out)
    assert out.getvalue() == f"2 item(s) of audit written to {target}.\n"
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["queue_seq"] for line in lines] == [audit["early"].queue_seq, 3]


def test_text_beyond_ascii_is_written_as_utf8(make_stash, tmp_path):
    stash = make_stash("audit")
    processing.submit(stash, {"text": "Grüße, 東京 🎉"})
    target = tmp_path / "out.jsonl"
    call_command("stash_export", "audit", "-o", str(target), stdout=io.StringIO())
    assert "Grüße, 東京 🎉" in target.read_text(encoding="utf-8")
    assert json.loads(target.read_bytes())["payload"] == {"text": "Grüße, 東京 🎉"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope"], r"^No stash with slug 'nope'\.$"),
        (["audit", "--status", "done"], r"argument --status: invalid choice: 'done'"),
        (
            ["audit", "--status", "rejected", "--after", "3"],
            (
                r"^--after is a queue number: use it with --status "
                r"accepted alone\.$"
            ),
        ),
        (["audit", "--after", "-1"], r"^--after must be 0 or more, not -1\.$"),
        (["audit", "--after", "x"], r"argument --after: invalid int value: 'x'"),
    ],
)
def test_bad_arguments_are_refused_naming_what_is_wrong(audit, args, message, tmp_path):
    target = tmp_path / "keep.jsonl"
    target.write_text("what was there\n")
    with pytest.raises(CommandError, match=message):
        export(*args, "--output", str(target))
    assert target.read_text() == "what was there\n"


def test_an_unwritable_output_is_a_command_error(audit, tmp_path):
    with pytest.raises(CommandError, match=r"^Cannot write .*missing/out\.jsonl: No such file or directory\.$"):
        export("audit", "--output", str(tmp_path / "missing" / "out.jsonl"))


def test_5000_items_stream_in_queue_order_in_little_memory(make_stash, tmp_path):
    """The items total about 11 MB of JSON; the export never holds more than a chunk of them."""
    stash = make_stash("big")
    text = "x" * 2000
    now = timezone.now()
    # Created in the reverse of their queue order, so the order must come from queue_seq.
    Content.objects.bulk_create(
        Content(stash=stash, payload={"n": n, "text": text}, status=Status.ACCEPTED, queue_seq=n + 1, processed_at=now)
        for n in reversed(range(5000))
    )
    Stash.objects.filter(pk=stash.pk).update(queue_head=5000)
    target = tmp_path / "big.jsonl"

    tracemalloc.start()
    try:
        call_command("stash_export", "big", "--status", "accepted", "--output", str(target), stdout=io.StringIO())
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    size = target.stat().st_size
    assert size > 5000 * 2000
    assert peak < size / 4, f"peak {peak:,} bytes for {size:,} bytes of output"
    with target.open(encoding="utf-8") as lines:
        numbers = [json.loads(line)["payload"]["n"] for line in lines]
    assert numbers == list(range(5000))


def test_export_rows_refuses_after_for_anything_but_the_queue(make_stash):
    stash = make_stash("audit")
    with pytest.raises(ValueError, match=r"^after is a queue number"):
        list(processing.export_rows(stash, statuses=["accepted", "rejected"], after=0))
    assert list(processing.export_rows(stash, statuses=["accepted", "accepted"], after=0)) == []


def test_created_at_orders_the_items_that_are_not_the_queue(make_stash):
    stash = make_stash("audit")
    first, second = (processing.submit(stash, {"text": text})[0] for text in ("one", "two"))
    Content.objects.filter(pk=first.pk).update(created_at=timezone.now() + timedelta(hours=1))
    assert [row["payload"]["text"] for row in export("audit")] == ["two", "one"]
