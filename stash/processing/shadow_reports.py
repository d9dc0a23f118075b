"""A shadow's agreement report: its counts by live and shadow verdict, the hooks that decided differently,
the latest disagreeing items with both trails, and the shadow's time per item.

    report(shadow)     # {"items": 500, "agreed": 480, "disagreed": 20, "matrix": {"accepted/rejected": 20}, ...}
    described(shadow)  # the shadow as the API and the command show it, its report included
"""

from __future__ import annotations

import math
from typing import Any

from django.db.models import Count

from stash.models import PipelineRun, Shadow, ShadowRun
from stash.processing.importing import public_document

#: How many of the latest disagreeing items a report shows.
SAMPLE = 20


def report(shadow: Shadow, *, sample: int = SAMPLE) -> dict[str, Any]:
    """What ``shadow`` found so far (a few queries, whatever its size); see the module docstring."""
    runs = ShadowRun.objects.filter(shadow_id=shadow.pk)
    deciders = (
        runs.filter(agreed=False)
        .values("live_decider", "shadow_decider")
        .annotate(count=Count("pk"))
        .order_by("-count", "live_decider", "shadow_decider")
    )
    return {
        "items": shadow.items,
        "agreed": shadow.agreed,
        "disagreed": shadow.disagreed,
        "matrix": dict(sorted(shadow.matrix.items())),
        "deciders": [
            {"live": row["live_decider"], "shadow": row["shadow_decider"], "count": row["count"]} for row in deciders
        ],
        "disagreements": disagreements(shadow, sample),
        "time": {
            "mean_ms": round(shadow.time_total_us / shadow.items / 1000, 3) if shadow.items else None,
            "p95_ms": _p95(runs, shadow.items),
        },
    }


def disagreements(shadow: Shadow, limit: int = SAMPLE) -> list[dict[str, Any]]:
    """The latest ``limit`` items on which ``shadow`` disagreed with the live pipeline, each with both trails."""
    latest = list(ShadowRun.objects.filter(shadow_id=shadow.pk, agreed=False).order_by("-pk")[:limit])
    live: dict[tuple[Any, int], list[Any]] = {}
    for content_id, revision, trail in (
        PipelineRun.objects.filter(content_id__in=[run.content_id for run in latest])
        .order_by("finished_at", "pk")
        .values_list("content_id", "revision", "trail")
    ):
        live[content_id, revision] = trail  # the last run of each revision
    return [
        {
            "content": str(run.content_id),
            "revision": run.revision,
            "live": {
                "verdict": run.live_verdict,
                "decided_by": run.live_decider,
                "trail": live.get((run.content_id, run.revision), []),
            },
            "shadow": {
                "verdict": run.shadow_verdict,
                "decided_by": run.shadow_decider,
                "reason": run.shadow_reason,
                "trail": run.shadow_trail,
                "duration_ms": run.duration_ms,
            },
        }
        for run in latest
    ]


def _p95(runs: Any, items: int) -> float | None:
    if not items:
        return None
    index = max(0, math.ceil(0.95 * items) - 1)
    values = list(runs.order_by("duration_ms").values_list("duration_ms", flat=True)[index : index + 1])
    return round(values[0], 3) if values else None


def described(shadow: Shadow, *, document: bool = False) -> dict[str, Any]:
    """``shadow`` as the API and ``stash_shadow status`` show it: what it runs, on what share, until
    when, its status and its report; with ``document``, the pipeline it runs (no secrets, no config ids)."""
    data: dict[str, Any] = {
        "id": shadow.pk,
        "stash": shadow.stash.slug,
        "status": shadow.status,
        "version": shadow.version,
        "percent": shadow.percent,
        "count": shadow.count,
        "ends_at": shadow.ends_at.isoformat() if shadow.ends_at else None,
        "started_by": shadow.started_by.get_username() if shadow.started_by else None,
        "started_at": shadow.started_at.isoformat(),
        "ended_at": shadow.ended_at.isoformat() if shadow.ended_at else None,
        "promoted_version": shadow.promoted_version,
        "report": report(shadow),
    }
    if document:
        data["document"] = public_document(shadow.document)
    return data
