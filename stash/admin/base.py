"""What the model admins share: the stash styles, one change per post, hook titles and counters, the single stash
a list is narrowed to, params shown without secrets."""

import json
from contextlib import nullcontext

from django.contrib import admin
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _, ngettext

from stash import processing
from stash.admin import formatting
from stash.core import registry
from stash.models import Stash

# sortable2 takes the first ordering field as the one it drags; the models order by stash first.
HOOK_ORDERING = ["position", "pk"]


# The changelist filter that names one stash: only then can its hooks be dragged into order.
STASH_FILTER = "stash__id__exact"


class StyledAdmin(admin.ModelAdmin):
    """Lists and pages with the stash styles: disabled hooks marked, trails and JSON readable."""

    class Media:
        css = {"all": ["stash/admin.css"]}


class OneChangePerPost:
    """Each save, action or delete posted to these pages is one change of the stashes' pipelines
    (``processing.one_change``): their ``config_version`` moves once, however many rows it writes
    (the stash, its hooks, their order), and not at all when nothing changed."""

    def changeform_view(self, request, *args, **kwargs):
        with _one_change_if_posted(request):
            return super().changeform_view(request, *args, **kwargs)

    def changelist_view(self, request, *args, **kwargs):
        with _one_change_if_posted(request):
            return super().changelist_view(request, *args, **kwargs)

    def delete_view(self, request, *args, **kwargs):
        with _one_change_if_posted(request):
            return super().delete_view(request, *args, **kwargs)


def _one_change_if_posted(request):
    return processing.one_change() if request.method == "POST" else nullcontext()


def hook_title(config):
    """A hook's label (or name), flagged when its hook is not registered or it is disabled."""
    title = config.title
    if config.is_missing:
        return format_html(
            '<span class="stash-missing" title="{}">{} ⚠ {}</span>',
            _("This hook is not registered: it fails by its on-error policy."),
            title,
            _("not registered"),
        )
    if not config.enabled:
        # Said in words, in full colour (a faded row fails contrast).
        return format_html(
            '<span class="stash-disabled">{}</span> <span class="stash-badge stash-badge-disabled">{}</span>',
            title,
            _("disabled"),
        )
    return title


def counters(config):
    """Counters of one configured hook, as fit its kind: a filter's kept, dropped and held; a
    transform's changed and unchanged; a sink's deliveries (delivered, failed, retrying); then its
    errors, its recent times and (an enforcing filter) its precision. A line breaks between figures
    only (the hook list is narrow on a laptop), never inside one."""
    hook_stats = getattr(config, "stats", None)
    if config.pk is None or hook_stats is None:
        return "–"
    if hook_stats.kind == "sink":
        return _sink_counters(hook_stats)
    runs = ngettext("%(n)s run", "%(n)s runs", hook_stats.runs) % {"n": hook_stats.runs}
    errors = ngettext("%(n)s error", "%(n)s errors", hook_stats.errors) % {"n": hook_stats.errors}
    if hook_stats.kind == "transform":
        first = [
            runs,
            _("%(n)s changed") % {"n": hook_stats.changed},
            _("%(n)s unchanged") % {"n": hook_stats.unchanged},
        ]
        second = [errors]
    else:
        first = [
            runs,
            _("%(n)s kept") % {"n": hook_stats.kept},
            _("%(n)s dropped") % {"n": hook_stats.dropped},
            _("%(n)s held") % {"n": hook_stats.held},
        ]
        second = [errors, _("%(n)s overturned") % {"n": hook_stats.overturned}]
    times = [
        f"p50 {formatting.duration(hook_stats.p50_ms)}",
        f"p95 {formatting.duration(hook_stats.p95_ms)}",
        _("mean %(time)s") % {"time": formatting.duration(hook_stats.mean_ms)},
    ]
    return format_html(
        '<span class="stash-counters">{}<br>{}<br><span class="quiet">{}</span>{}</span>',
        figures(first),
        figures(second),
        figures(times),
        precision_line(hook_stats.precision) if hook_stats.kind != "transform" else "",
    )


def figures(parts):
    """Figures joined by " · ", each kept on one line (its spaces do not break)."""
    return " · ".join(str(part).replace(" ", "\u00a0") for part in parts)


def _sink_counters(hook_stats):
    """A sink's deliveries by status; one called in process keeps no record of its calls."""
    counts = hook_stats.deliveries
    if counts is None:
        return format_html(
            '<span class="stash-counters quiet">{}</span>', _("called in process after each verdict; not recorded")
        )
    parts = [
        _("%(n)s delivered") % {"n": counts["delivered"]},
        _("%(n)s failed") % {"n": counts["failed"]},
        _("%(n)s retrying") % {"n": counts["retrying"]},
    ]
    if counts.get("pending"):
        parts.append(_("%(n)s not tried yet") % {"n": counts["pending"]})
    return format_html('<span class="stash-counters">{}</span>', figures(parts))


def precision_line(figures_by_days):
    """ "precision 7 d 0.80 of 10 · 30 d 0.75 of 20" (``stats.HookStats.precision``); nothing for none,
    nor before people decided any of its items."""
    if not any(figure.decisions for figure in (figures_by_days or {}).values()):
        return ""
    parts = [
        _("%(days)d d %(value)s of %(count)d")
        % {"days": days, "value": "–" if figure.value is None else f"{figure.value:.2f}", "count": figure.decisions}
        for days, figure in sorted(figures_by_days.items())
    ]
    return format_html(
        '<br><span class="stash-precision" title="{}">{} {}</span>',
        _("Of the items it rejected or held that people decided: the share they kept rejected, and how many."),
        _("precision"),
        figures(parts),
    )


def single_stash(request):
    """The stash a changelist is narrowed to by its stash filter alone (so it can be dragged), or None.

    With only one stash there is no stash filter to pick (the admin hides a filter with one
    choice): the unfiltered list is that stash's.
    """
    if set(request.GET) - {STASH_FILTER, "p", "o"}:
        return None
    if STASH_FILTER not in request.GET:
        stashes = list(Stash.objects.all()[:2])
        return stashes[0] if len(stashes) == 1 else None
    if not request.GET[STASH_FILTER].isdigit():
        return None
    return Stash.objects.filter(pk=request.GET[STASH_FILTER]).first()


def without_secrets(fields):
    """Fields (or fieldsets) for someone who may only view hook configs: the params shown without secrets."""
    if fields and isinstance(fields[0], (list, tuple)):
        return [(name, {**options, "fields": without_secrets(options["fields"])}) for name, options in fields]
    return ["shown_params" if field == "params" else field for field in fields]


class ShownParamsMixin:
    """``shown_params``: a config's params as anyone may see them (indented, escaped, secrets left out)."""

    @admin.display(description=_("params"))
    def shown_params(self, obj):
        return pretty(registry.shown_params(obj.hook, obj.params))


def pretty(payload):
    return format_html('<pre class="stash-json">{}</pre>', json.dumps(payload, indent=2, ensure_ascii=False))
