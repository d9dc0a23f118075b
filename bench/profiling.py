"""Where the time goes: stash's ``processing.process()`` profiled in process, and SQL queries per call.

    where_time_goes(stash)   # {"stash 200": {"ms", "queries", "statements", "top"}, "hand-written 200": ...}

Items are made pending with ``bulk_create`` (which publishes nothing), so the worker never sees them;
the baseline's tasks are called directly (``judge_batch(ids)`` runs in this process).
"""
import cProfile
import pstats
import re
import time
from collections import Counter
from pathlib import Path

from django.db import connection
from django.test.utils import CaptureQueriesContext

from stash import processing
from stash.models import Content, content_hash

from .models import Item
from .tasks import judge_batch, judge_one
from .workload import payloads

ROOT = str(Path(__file__).resolve().parents[1]) + "/"
TOP = 12
SIZES = (200, 1)


def pending_contents(stash, count):
    bodies = payloads(count)
    contents = Content.objects.bulk_create(
        [Content(stash=stash, payload=body, content_hash=content_hash(body)) for body in bodies])
    return [content.pk for content in contents]


def pending_items(count):
    return [item.pk for item in Item.objects.bulk_create([Item(payload=body) for body in payloads(count)])]


def where_time_goes(stash):
    """Per call of 200 and of 1 item: wall time, queries and (stash) the top of the profile."""
    processing.process(pending_contents(stash, SIZES[0]))  # warm: the pipeline is built once per process
    figures = {}
    for size in SIZES:
        figures[f"stash {size}"] = {
            **timed_and_counted(processing.process, lambda size=size: pending_contents(stash, size)),
            "top": profiled(processing.process, pending_contents(stash, size)),
        }
        hand_task = judge_batch if size > 1 else (lambda ids: judge_one(ids[0]))
        figures[f"hand-written {size}"] = timed_and_counted(hand_task, lambda size=size: pending_items(size))
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
