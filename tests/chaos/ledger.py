"""What a chaos scenario checks: every saved item reaches its expected verdict, once per revision.

Each item's payload names the verdict it must reach (``"expect"``: one status, or several). After
the fault, ``Scenario.settle`` waits for the verdicts, sweeping every second as beat would, and
counts what went wrong:

- lost: an item with no verdict at its latest revision (still pending or processing, or gone);
- judged twice: an item revision with more than one pipeline run;
- wrong: a verdict other than the expected one;
- queue faults: accepted numbers given twice, skipped, or beyond the stash's head.

Recovery is the time from the end of the fault to the last verdict. A worker that exits on its
own meanwhile is started again, as a supervisor would, and counted.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field

from django.db import connection
from django.db.models import Count

from stash import processing
from stash.models import Content, HookConfig, PipelineRun, Stash

WAITING = (Content.Status.PENDING, Content.Status.PROCESSING)
SCALE = os.environ.get("STASH_CHAOS_SCALE", "short")
LONG = SCALE == "long"
# The default stash: every item needs a text, and one containing "spam" is rejected.
CHECKS = [("require_fields", {"fields": ["text"]}), ("keyword_blocklist", {"words": ["spam"]})]


def scaled(short, long):
    """A figure for the short run (inside ``make test``) or the long one (``make chaos``)."""
    return long if LONG else short


def backend():
    return "postgresql" if connection.vendor == "postgresql" else "sqlite"


def payload(i, spam=False, **extra):
    """An item that the default stash accepts (or rejects, with ``spam``)."""
    text = f"item {i} with spam" if spam else f"item {i}"
    return {"text": text, "expect": "rejected" if spam else "accepted", **extra}


@dataclass
class Figures:
    scenario: str
    backend: str
    scale: str
    items: int = 0
    lost: int = 0
    judged_twice: int = 0
    wrong: int = 0
    queue_faults: int = 0
    recovery_seconds: float | None = None
    worker_restarts: int = 0  # workers that exited on their own and were started again, as a supervisor does
    expected_failure: str = ""  # the fix this scenario waits for (an xfail's reason)
    problems: list[str] = field(default_factory=list)
    measured: dict[str, float] = field(default_factory=dict)  # a scenario's own figures ("max save wait s": 0.1)

    @property
    def clean(self):
        return not (self.lost or self.judged_twice or self.wrong or self.queue_faults)

    def as_dict(self):
        return {**asdict(self), "problems": self.problems[:10]}


class Scenario:
    """One scenario's items, its fault's end and its figures (added to ``record`` when settled)."""

    def __init__(self, name, record, make_stash, expected_failure=""):
        self.name = name
        self.expected_failure = expected_failure
        self.record = record
        self._make_stash = make_stash
        self.items: list[Content] = []
        self.workers = []
        self.worker_restarts = 0
        self.healed_at = None

    def stash(self, slug, hooks=CHECKS, **fields):
        return self._make_stash(slug, hooks=hooks, **fields)

    def submit(self, stash, payloads):
        """Save each payload as people and programs do (one transaction each); keep the items."""
        saved = [processing.submit(stash, p)[0] for p in payloads]
        self.items.extend(saved)
        return saved

    def submit_bulk(self, stash, payloads):
        """Save the payloads in one transaction, as ``contents/bulk/`` does."""
        saved = processing.submit_many(stash, list(payloads))
        self.items.extend(saved)
        return saved

    def supervise(self, worker):
        """While settling, start ``worker`` again if it exits, as systemd's ``Restart=always`` would."""
        self.workers.append(worker)
        return worker

    def track(self, items):
        self.items.extend(items)

    def healed(self):
        """The fault is over: recovery is measured from now."""
        self.healed_at = time.monotonic()

    def settle(self, timeout=None, sweep_every=1.0):
        """Wait for every item's verdict (sweeping as beat does), record the figures, assert them."""
        timeout = timeout or scaled(60, 240)
        if self.healed_at is None:
            self.healed()
        ids = [item.pk for item in self.items]
        deadline = time.monotonic() + timeout
        last_sweep = 0.0
        while time.monotonic() < deadline:
            if not Content.objects.filter(pk__in=ids, status__in=WAITING).exists():
                break
            for worker in self.workers:
                if worker.process.poll() is not None:
                    self.worker_restarts += 1
                    worker.ensure_running()
            if time.monotonic() - last_sweep >= sweep_every:
                processing.sweep()
                last_sweep = time.monotonic()
            time.sleep(0.1)
        figures = self.count(ids)
        if not figures.lost:
            figures.recovery_seconds = round(time.monotonic() - self.healed_at, 1)
        self.record.append(figures)
        assert figures.clean, f"{self.name}: {figures.as_dict()}"
        return figures

    def count(self, ids) -> Figures:
        figures = Figures(
            self.name,
            backend(),
            SCALE,
            items=len(ids),
            worker_restarts=self.worker_restarts,
            expected_failure=self.expected_failure,
        )
        found = {c.pk: c for c in Content.objects.filter(pk__in=ids)}
        for pk in ids:
            item = found.get(pk)
            if (
                item is None
                or item.status in WAITING
                or item.processed_revision != item.revision
                and (item.status != Content.Status.FAILED)
            ):
                figures.lost += 1
                figures.problems.append(f"{pk}: no verdict ({item.status if item else 'gone'})")
                continue
            data = item.payload.get("data")  # the submit form puts what it is given under "data"
            expect = item.payload.get("expect", data.get("expect") if isinstance(data, dict) else None)
            expected = {expect} if isinstance(expect, str) else set(expect or ())
            if item.status not in expected:
                figures.wrong += 1
                figures.problems.append(f"{pk}: {item.status}, not {sorted(expected)} ({item.reason})")
        twice = (
            PipelineRun.objects.filter(content_id__in=ids)
            .values("content_id", "revision")
            .annotate(runs=Count("id"))
            .filter(runs__gt=1)
        )
        for row in twice:
            figures.judged_twice += 1
            figures.problems.append(f"{row['content_id']} r{row['revision']}: {row['runs']} runs")
        for stash_id in sorted({item.stash_id for item in found.values()}):
            figures.queue_faults += self._queue_faults(stash_id, figures.problems)
        return figures

    @staticmethod
    def _queue_faults(stash_id, problems):
        """Numbers are handed out 1..head, one per accepting run; those of items accepted and then
        edited are gone from the queue, every other must be held by exactly one item."""
        head = Stash.objects.get(pk=stash_id).queue_head
        seqs = list(
            Content.objects.filter(stash_id=stash_id, queue_seq__isnull=False).values_list("queue_seq", flat=True)
        )
        accepted_runs = PipelineRun.objects.filter(content__stash_id=stash_id, outcome="accepted")
        superseded = sum(1 for run in accepted_runs.select_related("content") if run.revision != run.content.revision)
        repeats = len(seqs) - len(set(seqs))
        beyond = sum(1 for seq in seqs if not 1 <= seq <= head)
        gaps = head - len(set(seqs)) - superseded
        faults = repeats + beyond + abs(gaps) + abs(accepted_runs.count() - head)
        if faults:
            problems.append(
                f"stash {stash_id}: head {head}, numbers {sorted(seqs)[:20]}..., {repeats} repeated, "
                f"{beyond} beyond the head, {gaps} missing, {accepted_runs.count()} accepting runs"
            )
        return faults


def hook_config(stash, hook):
    return HookConfig.objects.get(stash=stash, hook=hook)
