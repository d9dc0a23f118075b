"""Judging speed against a batch job written by hand for the same five checks.

`make test` runs it small, as a test that both judge every item alike; `make bench` runs it
large and writes the figures to docs/BENCHMARKS.md. Both sides run in this process, on the same
database, alternating rounds, so the ratio is measured under the same load (a single time on a
shared machine is not a figure). Neither side includes the broker round trip.
"""
import json
import os
import re
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from django.db import connection, transaction

from stash import processing
from stash.models import Content, PipelineRun

ITEMS = int(os.environ.get("STASH_BENCH_ITEMS", 400))
ROUNDS = int(os.environ.get("STASH_BENCH_ROUNDS", 1))
REPORT = os.environ.get("STASH_BENCH_REPORT")  # a path: write the figures there
BATCH = 200
BLOCKED = ["spam", "scam"]
HOOKS = [
    ("require_fields", {"fields": ["text"]}),
    ("keyword_blocklist", {"words": BLOCKED}),
    ("max_size", {"max_bytes": 2000}),
    ("require_fields", {"fields": ["time"]}),
    ("keyword_blocklist", {"words": ["free money"]}),
]


def payload(n):
    text = f"item {n} " + ("spam " if n % 10 == 0 else "") + "lorem ipsum " * (n % 7)
    body = {"text": text, "data": {"n": n}}
    if n % 13:
        body["time"] = "12:00"
    return body


def hand_written(ids):
    """The batch job a good engineer writes for these checks: lock, check, bulk update."""
    blocked = re.compile("|".join(map(re.escape, BLOCKED)), re.IGNORECASE)
    for start in range(0, len(ids), BATCH):
        with transaction.atomic():
            items = list(Content.objects.select_for_update().filter(pk__in=ids[start:start + BATCH],
                                                                    status="pending"))
            for item in items:
                body = item.payload
                text = body.get("text") or ""
                if not text:
                    item.status, item.reason = "rejected", "missing text"
                elif blocked.search(text):
                    item.status, item.reason = "rejected", "blocked word"
                elif len(json.dumps(body, separators=(",", ":"))) > 2000:
                    item.status, item.reason = "rejected", "too large"
                elif not body.get("time"):
                    item.status, item.reason = "rejected", "missing time"
                elif "free money" in text.lower():
                    item.status, item.reason = "rejected", "blocked word"
                else:
                    item.status, item.reason = "accepted", ""
            Content.objects.bulk_update(items, ["status", "reason"])


def by_stash(ids):
    for start in range(0, len(ids), BATCH):
        processing.process(ids[start:start + BATCH])


def reset(ids):
    Content.objects.filter(pk__in=ids).update(status="pending", reason="", attempts=0, lease_token=None,
                                              queue_seq=None, rejected_by=None)
    PipelineRun.objects.all().delete()


def timed(job, ids):
    reset(ids)
    started = time.perf_counter()
    job(ids)
    return time.perf_counter() - started


@pytest.mark.django_db(transaction=True)
def test_a_stash_judges_a_bulk_like_the_hand_written_job(make_stash):
    stash = make_stash("bench", hooks=HOOKS)
    items = Content.objects.bulk_create(
        [Content(stash=stash, payload=payload(n), content_hash=str(n)) for n in range(ITEMS)])
    ids = [item.pk for item in items]

    stash_times, hand_times = [], []
    for _ in range(ROUNDS):
        hand_times.append(timed(hand_written, ids))
        expected = dict(Content.objects.values_list("pk", "status"))
        stash_times.append(timed(by_stash, ids))
        judged = dict(Content.objects.values_list("pk", "status"))
        assert judged == expected  # the same verdict for every item
        assert PipelineRun.objects.count() == ITEMS  # and a trail for each

    accepted = sum(status == "accepted" for status in judged.values())
    assert 0 < accepted < ITEMS
    if REPORT:
        write_report(Path(REPORT), statistics.median(stash_times), statistics.median(hand_times))


def write_report(path, stash_time, hand_time):
    lines = [
        "# Benchmarks",
        "",
        f"Made by `make bench` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, database "
        f"{connection.vendor}, {ITEMS} items in batches of {BATCH}, median of {ROUNDS} alternating rounds.",
        "",
        "## Bulk judging: a stash against a hand-written batch job (same five checks)",
        "",
        "| | items/s | ratio |",
        "|---|---|---|",
        f"| hand-written job (lock, check, `bulk_update`) | {ITEMS / hand_time:,.0f} | 1.00 |",
        f"| stash `processing.process` (with trails and counters) | {ITEMS / stash_time:,.0f} | "
        f"{hand_time / stash_time:.2f} |",
        "",
        "Both run in one process on the same database; the broker round trip is not included.",
        "",
    ]
    path.write_text("\n".join(lines))
