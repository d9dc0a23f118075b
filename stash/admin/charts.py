"""The stash page's small charts: hourly bars as inline SVG, drawn on the server, each with its words.

    rows = charts.activity_rows(processing.hook_activity(stash))
    rows[0].cells[0].figure, rows[0].cells[0].svg     # "12%", <svg role="img"><title>No spam: drop rate ...

No script draws them: an SVG of one ``<rect>`` per hour that had runs (an hour without runs has no
bar, an hour at zero a one-pixel one), and a ``<title>`` that says what the bars show for those who
cannot see them. Rates are drawn against 100%, times against the highest hour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _, gettext_lazy, ngettext

from stash.admin.formatting import duration, percent
from stash.processing.activity import HookActivity, StashActivity

WIDTH = 96
HEIGHT = 20
#: The lowest bar of a value above zero, so that it differs from a zero.
MIN_BAR = 2.0


@dataclass(frozen=True)
class Metric:
    """One chart of a hook: the ``Bucket`` attribute it reads, its name, how its values read, its scale."""

    attribute: str
    name: str
    formatted: Callable[[float | None], str]
    top: float | None = None  # the value of a full bar; None: the highest value drawn


METRICS = [
    Metric("drop_rate", gettext_lazy("drop rate"), percent, top=1.0),
    Metric("hold_rate", gettext_lazy("hold rate"), percent, top=1.0),
    Metric("error_rate", gettext_lazy("error rate"), percent, top=1.0),
    Metric("p95_ms", gettext_lazy("p95 time"), duration),
]


@dataclass(frozen=True)
class Cell:
    figure: str  # the value over the whole window
    svg: SafeString


@dataclass(frozen=True)
class Row:
    activity: HookActivity
    cells: list[Cell]


def bars(values: Sequence[float | None], title: str, top: float | None = None) -> SafeString:
    """An inline SVG with a bar per value (None: no bar), full height at ``top`` (default: the
    highest value), and ``title`` as its text alternative."""
    drawn = [value for value in values if value is not None]
    top = top if top is not None else max(drawn, default=0.0)
    step = WIDTH / max(len(values), 1)
    rects = []
    for index, value in enumerate(values):
        if value is None:
            continue
        height = 1.0 if value <= 0 or not top else max(MIN_BAR, min(value / top, 1.0) * HEIGHT)
        rects.append(
            (f"{index * step + 0.5:.2f}", f"{HEIGHT - height:.2f}", f"{max(step - 1, 1):.2f}", f"{height:.2f}")
        )
    return format_html(
        '<svg class="stash-spark" role="img" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{title}</title><rect class="area" width="{w}" height="{h}"/>'
        "{bars}</svg>",
        w=WIDTH,
        h=HEIGHT,
        title=title,
        bars=format_html_join("", '<rect class="bar" x="{}" y="{}" width="{}" height="{}"/>', rects),
    )


def describe(hook: str, metric: Metric, values: Sequence[float | None]) -> str:
    """The words for a chart: what it shows, its highest and latest values, its hours without runs."""
    drawn = [value for value in values if value is not None]
    words = ngettext(
        "%(hook)s: %(metric)s per hour over the last hour",
        "%(hook)s: %(metric)s per hour over the last %(hours)d hours",
        len(values),
    ) % {"hook": hook, "metric": metric.name, "hours": len(values)}
    if not drawn:
        return words + ": " + _("no runs.")
    latest = values[-1]
    facts = [
        _("highest %(value)s") % {"value": metric.formatted(max(drawn))},
        _("latest hour %(value)s") % {"value": metric.formatted(latest) if latest is not None else _("no runs")},
    ]
    idle = len(values) - len(drawn)
    if idle:
        facts.append(ngettext("%(n)d hour without runs", "%(n)d hours without runs", idle) % {"n": idle})
    return f"{words}: {', '.join(facts)}."


def activity_rows(activity: StashActivity) -> list[Row]:
    """A row per hook of ``activity``: for each of ``METRICS``, its figure over the window and its chart."""
    rows = []
    for hook in activity.hooks:
        cells = []
        for metric in METRICS:
            values = [getattr(bucket, metric.attribute) for bucket in hook.hours]
            cells.append(
                Cell(
                    figure=metric.formatted(getattr(hook.day, metric.attribute)),
                    svg=bars(values, describe(hook.config.title, metric, values), metric.top),
                )
            )
        rows.append(Row(activity=hook, cells=cells))
    return rows
