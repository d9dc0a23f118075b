"""Where the time goes: stash's ``processing.judge()`` profiled in process, SQL queries per call,
and what ``stash.db.bulk_sql`` buys over Django's ``bulk_update`` and ``bulk_create``.

    where_time_goes(stash)   # {"calls": {"stash 200": {"ms", "queries", "statements", "top"},
                             #            "hand-written 200": ...},
                             #  "bulk_sql": {"rows": 200, "repeats": 5, "update": {"bulk_sql": ms, "django": ms},
                             #               "insert": {...}}}

Items are made pending with ``bulk_create`` (which publishes nothing), so the worker never sees them;
the baseline's tasks are called directly (``judge_batch(ids)`` runs in this process).
"""

import cProfile
import itertools
import pstats
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from stash import processing
from stash.db import bulk_sql
from stash.models import Content, PipelineRun, content_hash

from .baseline.models import Item
from .baseline.tasks import judge_batch, judge_one
from .workload import payloads

ROOT = str(Path(__file__).resolve().parents[1]) + "/"
TOP = 12
SIZES = (200, 1)
BULK_ROWS, BULK_REPEATS = 200, 5
# The verdict write of stash.processing.judging: these fields per item, the rest alike for every item.
VERDICT_FIELDS = ["status", "reason", "decided_by", "processed_revision", "queue_seq"]


def pending_contents(stash, count):
    bodies = payloads(count)
    contents = Content.objects.bulk_create(
        [Content(stash=stash, payload=body, content_hash=content_hash(body)) for body in bodies]
    )
    return [content.pk for content in contents]


def pending_items(count):
    return [item.pk for item in Item.objects.bulk_create([Item(payload=body) for body in payloads(count)])]


def where_time_goes(stash):
    """Per call of 200 and of 1 item: wall time, queries and (stash) the top of the profile; then
    ``bulk_sql`` against Django (``bulk_writes``)."""
    processing.judge(pending_contents(stash, SIZES[0]))  # warm: the pipeline is built once per process
    figures = {}
    for size in SIZES:
        figures[f"stash {size}"] = {
            **timed_and_counted(processing.judge, lambda size=size: pending_contents(stash, size)),
            "top": profiled(processing.judge, pending_contents(stash, size)),
        }
        hand_task = judge_batch if size > 1 else (lambda ids: judge_one(ids[0]))
        figures[f"hand-written {size}"] = timed_and_counted(hand_task, lambda size=size: pending_items(size))
    return {"calls": figures, "bulk_sql": bulk_writes(stash)}


def bulk_writes(stash):
    """Milliseconds per call (median of ``BULK_REPEATS``, each in a transaction of its own, after one
    unmeasured) of the two writes of a judged batch of ``BULK_ROWS`` items, by ``bulk_sql`` and by
    Django: the verdicts (``update_rows`` ↔ ``bulk_update``) and the pipeline runs (``insert_rows`` ↔
    ``bulk_create``), with the trails that ``where_time_goes`` left behind."""
    contents = list(Content.objects.filter(pk__in=pending_contents(stash, BULK_ROWS)))
    now = timezone.now()
    constants = {"processed_at": now, "updated_at": now, "lease_token": None, "lease_until": None}
    for number, content in enumerate(contents):
        content.status, content.reason, content.processed_revision, content.queue_seq = "accepted", "", 1, number
        for name, value in constants.items():
            setattr(content, name, value)  # as bulk_update needs them; update_rows takes them once
    trails = list(PipelineRun.objects.filter(content__stash=stash).values_list("trail", flat=True)[:BULK_ROWS])

    def runs():
        return [
            PipelineRun(
                content=content,
                revision=1,
                config_version=stash.config_version,
                outcome="accepted",
                started_at=now,
                finished_at=now,
                duration_ms=1.0,
                trail=trail,
            )
            for content, trail in zip(contents, itertools.cycle(trails or [[]]))
        ]

    writes = {
        "update": {
            "bulk_sql": lambda _rows: bulk_sql.update_rows(Content, contents, VERDICT_FIELDS, constants),
            "django": lambda _rows: Content.objects.bulk_update(contents, [*VERDICT_FIELDS, *constants]),
        },
        "insert": {
            "bulk_sql": lambda rows: bulk_sql.insert_rows(PipelineRun, rows),
            "django": lambda rows: PipelineRun.objects.bulk_create(rows),
        },
    }
    figures = {"rows": len(contents), "repeats": BULK_REPEATS}
    for write, ways in writes.items():
        times = {way: [] for way in ways}
        for repeat in range(BULK_REPEATS + 1):
            for way, call in ways.items():  # alternately, so both see the same load
                rows = runs()
                started = time.perf_counter()
                with transaction.atomic():
                    call(rows)
                if repeat:
                    times[way].append((time.perf_counter() - started) * 1000)
        figures[write] = {way: statistics.median(values) for way, values in times.items()}
    return figures


def timed_and_counted(call, make_ids):
    """Milliseconds of one call on fresh ids, then the queries of another."""
    ids = make_ids()
    started = time.perf_counter()
    call(ids)
    elapsed = (time.perf_counter() - started) * 1000
    ids = make_ids()
    with CaptureQueriesContext(connection) as queries:
        call(ids)
    return {"ms": elapsed, "queries": len(queries), "statements": statement_kinds(queries.captured_queries)}


def statement_kinds(captured):
    """``"UPDATE stash_content ×2, ..."``: the queries by statement and first table."""
    kinds = Counter()
    for query in captured:
        sql = query["sql"].lstrip()
        verb = sql.split(None, 1)[0].upper() if sql else "?"
        table = re.search(r'(?:FROM|INTO|UPDATE)\s+"?(\w+)"?', sql, re.IGNORECASE)
        kinds[f"{verb} {table.group(1) if table else ''}".strip()] += 1
    return ", ".join(f"{kind} ×{count}" for kind, count in kinds.most_common())


def profiled(call, ids):
    """The top entries by cumulative time of ``call(ids)`` under cProfile."""
    profile = cProfile.Profile()
    profile.runcall(call, ids)
    stats = pstats.Stats(profile).sort_stats("cumulative")
    rows = []
    for key in stats.fcn_list[:TOP]:
        _cc, calls, own, cumulative, _callers = stats.stats[key]
        rows.append({"calls": calls, "own_ms": own * 1000, "cum_ms": cumulative * 1000, "where": location(key)})
    return rows


def location(key):
    """``stash/processing/judging.py:120(process)`` for a pstats key, paths trimmed."""
    filename, line, name = key
    if filename == "~":
        return name
    filename = filename.removeprefix(ROOT)
    if "site-packages/" in filename:
        filename = filename.split("site-packages/", 1)[1]
    elif "/lib/python" in filename:
        filename = filename.split("/lib/", 1)[1]
    return f"{filename}:{line}({name})"
