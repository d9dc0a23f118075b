"""The admin: stashes with their hooks in drag-and-drop order, the hooks, the items and their runs (golden
examples: ``admin_examples``)."""
import json
import uuid
from contextlib import nullcontext
from functools import partial

from adminsortable2.admin import SortableAdminBase, SortableAdminMixin, SortableTabularInline
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _, ngettext

from stash import processing
from stash.admin import charts, examples as admin_examples, formatting, guard as admin_guard
from stash.admin.forms import (
    ContentForm,
    HookConfigInlineForm,
    HookConfigInlineFormSet,
    HookConfigPageForm,
    HookListFormSet,
    ReviewActionForm,
)
from stash.admin.views import (
    pipelines as admin_pipelines,
    review as admin_review,
    tools as admin_views,
    versions as admin_versions,
)
from stash.core import registry
from stash.models import Content, Example, HookConfig, PipelineRun, Stash
from stash.processing import stats

# sortable2 takes the first ordering field as the one it drags; the models order by stash first.
HOOK_ORDERING = ["position", "pk"]
# The changelist filter that names one stash: only then can its hooks be dragged into order.
STASH_FILTER = "stash__id__exact"


class StyledAdmin(admin.ModelAdmin):
    """Lists and pages with the stash styles: disabled hooks greyed, trails and JSON readable."""

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
        return format_html('<span class="stash-missing" title="{}">{} ⚠ {}</span>',
                           _("This hook is not registered: it fails by its on-error policy."), title,
                           _("not registered"))
    if not config.enabled:
        return format_html('<span class="stash-disabled">{}</span>', title)
    return title


def counters(config):
    """Counters of one configured hook, and its recent times."""
    hook_stats = getattr(config, "stats", None)
    if config.pk is None or hook_stats is None:
        return "–"
    return format_html(
        '<span class="stash-counters">{} runs · {} kept · {} dropped · {} held<br>{} errors · {} overturned<br>'
        '<span class="quiet">p50 {} · p95 {} · mean {}</span></span>',
        hook_stats.runs, hook_stats.kept, hook_stats.dropped, hook_stats.held, hook_stats.errors,
        hook_stats.overturned, formatting.duration(hook_stats.p50_ms), formatting.duration(hook_stats.p95_ms),
        formatting.duration(hook_stats.mean_ms))


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
        return _pretty(registry.shown_params(obj.hook, obj.params))


class HookConfigInline(ShownParamsMixin, SortableTabularInline):
    model = HookConfig
    verbose_name = _("hook")
    verbose_name_plural = _("hooks, in the order they run")
    form = HookConfigInlineForm
    formset = HookConfigInlineFormSet
    ordering = HOOK_ORDERING
    extra = 0
    show_change_link = True
    # Laid out in lines by admin.css: the short fields, then params, condition and counters.
    fields = ["hook", "label", "enabled", "mode", "on_error", "timeout_ms", "params", "condition", "hook_counters"]
    readonly_fields = ["hook_counters", "shown_params"]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return fields if self.has_change_permission(request, obj) else without_secrets(fields)

    @admin.display(description=_("counters"))
    def hook_counters(self, obj):
        return counters(obj)


def activity_context(stash, configs):
    """The stash page's charts of the last hours (nothing where the database cannot compute them)."""
    try:
        activity = processing.hook_activity(stash, configs)
    except processing.ActivityUnsupported:
        return {}
    return {"activity": activity, "activity_rows": charts.activity_rows(activity), "metrics": charts.METRICS}


@admin.register(Stash)
class StashAdmin(admin_guard.GuardedStashChanges, OneChangePerPost, SortableAdminBase, StyledAdmin):
    list_display = ["name", "slug", "is_active", "hooks_summary", "held", "config_version", "tools"]
    list_display_links = ["name"]
    list_filter = ["is_active"]
    search_fields = ["slug", "name"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["config_version"]
    fields = ["name", "slug", "description", "is_active", "allow_anonymous", "on_error", "max_payload_bytes",
              "queue", "examples_policy", "config_version"]
    inlines = [HookConfigInline]

    def get_queryset(self, request):
        return processing.with_held_counts(super().get_queryset(request)).annotate(
            hook_count=Count("hooks", distinct=True),
            enabled_count=Count("hooks", filter=Q(hooks__enabled=True), distinct=True),
        )

    @admin.display(description=_("hooks"))
    def hooks_summary(self, obj):
        url = reverse("admin:stash_hookconfig_changelist") + "?" + urlencode({STASH_FILTER: obj.pk})
        return format_html('<a href="{}">{}</a>', url, ngettext("%(n)d hook, %(on)d enabled",
                                                                "%(n)d hooks, %(on)d enabled", obj.hook_count)
                           % {"n": obj.hook_count, "on": obj.enabled_count})

    @admin.display(description=_("held for review"), ordering="held_count")
    def held(self, obj):
        return format_html('<a href="{}" title="{}">{}</a>', reverse("admin:stash_stash_review", args=[obj.pk]),
                           _("Review the held items, oldest first"), obj.held_count)

    @admin.display(description=_("try the hooks"))
    def tools(self, obj):
        return format_html('<a href="{}">{}</a> · <a href="{}">{}</a>',
                           reverse("admin:stash_stash_simulate", args=[obj.pk]), _("simulate"),
                           reverse("admin:stash_stash_replay", args=[obj.pk]), _("replay"))

    def get_urls(self):
        def view(function, route, name):
            return path(f"<path:object_id>/{route}", self.admin_site.admin_view(partial(function, self)),
                        name=f"stash_stash_{name}")

        return [
            view(admin_views.simulate, "simulate/", "simulate"),
            view(admin_views.replay, "replay/", "replay"),
            view(admin_review.review, "review/", "review"),
            view(admin_pipelines.download, "pipeline/download/", "download"),
            view(admin_pipelines.upload, "pipeline/upload/", "upload"),
            view(admin_versions.versions, "versions/", "versions"),
            view(admin_versions.compare, "versions/compare/", "compare"),
            view(admin_versions.version, "versions/<int:number>/", "version"),
            view(admin_versions.restore, "versions/<int:number>/restore/", "restore"),
            view(admin_examples.examples, "examples/", "examples"),
        ] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        stash = self.get_object(request, object_id)
        if request.method == "GET" and stash is not None:
            configs = list(stash.hooks.in_order())
            for config in configs:
                if config.is_missing:
                    self.message_user(request, _("Hook %(title)s uses %(hook)r, which is not registered: it fails by "
                                                 "its on-error policy. Disable or delete it.")
                                      % {"title": config.title, "hook": config.hook}, messages.WARNING)
            extra_context = {**activity_context(stash, configs), **(extra_context or {})}
        if stash is not None:
            extra_context = {"pipeline_tools": admin_pipelines.tools(self, request, stash), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # Golden examples that refused the hooks as edited are listed at the top of the page, with
        # the stash's own errors (the hooks table only points there).
        refused = [line for formset in context.get("inline_admin_formsets", [])
                   for line in getattr(formset.formset, "examples_refused", ())]
        if refused:
            context["adminform"].form.add_error(None, refused)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_related(self, request, form, formsets, change):
        # Rows are saved in place; then the dragged order, and no gaps from deleted rows.
        hooks = next((formset for formset in formsets if isinstance(formset, HookConfigInlineFormSet)), None)
        dragged = None
        if hooks is not None and request.user.has_perm("stash.change_hookconfig"):
            dragged = hooks.wanted_positions()
        with processing.saving_hooks(form.instance, dragged):
            super().save_related(request, form, formsets, change)


@admin.register(HookConfig)
class HookConfigAdmin(admin_guard.GuardedHookChanges, OneChangePerPost, ShownParamsMixin, SortableAdminMixin,
                      StyledAdmin):
    form = HookConfigPageForm
    ordering = HOOK_ORDERING
    list_display = ["order", "title", "stash", "kind", "enabled", "mode", "on_error", "statistics"]
    list_display_links = ["title"]
    list_editable = ["enabled"]
    list_filter = ["stash", "enabled", "mode", "hook"]
    list_select_related = ["stash"]
    search_fields = ["label", "hook"]
    actions = ["enable", "disable", "duplicate", "move_to_top", "move_to_bottom"]
    fieldsets = [
        (None, {"fields": ["stash", "hook", "label", "enabled", "mode"]}),
        (_("Settings"), {"fields": ["params", "condition", "on_error", "timeout_ms"]}),
        (_("Statistics"), {"fields": ["position", "statistics"]}),
    ]

    @property
    def change_list_template(self):
        # Adds the hint on reordering; extends sortable2's list, which extends the admin's.
        return "admin/stash/hookconfig/change_list.html"

    def get_ordering(self, request):
        if single_stash(request) is None:
            return ["stash__slug", *HOOK_ORDERING]
        return HOOK_ORDERING

    def get_readonly_fields(self, request, obj=None):
        # A hook stays in its stash: moving it would need a free position in the other one.
        return ["position", "statistics", "shown_params"] + (["stash"] if obj is not None else [])

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return self.fieldsets[:2]
        return self.fieldsets if self.has_change_permission(request, obj) else without_secrets(self.fieldsets)

    def get_actions(self, request):
        actions = super().get_actions(request)
        # sortable2's moves between pages shift positions one by one, which the unique
        # (stash, position) forbids; move to top / bottom go through one reorder instead.
        for name in [name for name in actions if name.startswith("move_to_") and name.endswith("_page")]:
            del actions[name]
        return actions

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        stats.attach(changelist.result_list)
        return changelist

    def get_changelist_formset(self, request, **kwargs):
        return super().get_changelist_formset(request, formset=HookListFormSet, **kwargs)

    def changelist_view(self, request, extra_context=None):
        extra_context = {"single_stash": single_stash(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        config = self.get_object(request, object_id)
        if request.method == "GET" and config is not None and config.is_missing:
            self.message_user(request, _("The hook %(hook)r is not registered: this config fails by its on-error "
                                         "policy. You can still disable it.") % {"hook": config.hook},
                              messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        # A new hook keeps position 0: the model appends it under the stash's lock (sortable2's
        # save_model would read max + 1 without one).
        processing.save_hook(obj)

    def delete_model(self, request, obj):
        processing.delete_hooks(HookConfig.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        processing.delete_hooks(queryset)

    def update_order(self, request):
        # A drag the golden examples refuse answers 409: hook_order.js reloads the list, which says why.
        return admin_guard.guarded(request, partial(admin_views.update_order, self, request),
                                   lambda why: HttpResponse(why, status=409, content_type="text/plain"))

    @admin.display(description="#", ordering="position")
    def order(self, obj):
        return obj.position

    @admin.display(description=_("hook"), ordering="label")
    def title(self, obj):
        return hook_title(obj)

    @admin.display(description=_("kind"))
    def kind(self, obj):
        hook_class = obj.hook_class
        return hook_class.kind if hook_class else "–"

    @admin.display(description=_("statistics"), ordering="runs_count")
    def statistics(self, obj):
        if obj.pk is not None and not hasattr(obj, "stats"):  # its own page; the list attaches them all
            stats.attach([obj])
        return counters(obj)

    @admin.action(description=_("Enable selected hooks"), permissions=["change"])
    def enable(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description=_("Disable selected hooks"), permissions=["change"])
    def disable(self, request, queryset):
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request, queryset, enabled):
        count = processing.set_enabled(queryset, enabled)
        message = (ngettext("%d hook enabled.", "%d hooks enabled.", count) if enabled
                   else ngettext("%d hook disabled.", "%d hooks disabled.", count))
        self.message_user(request, message % count, messages.SUCCESS)

    @admin.action(description=_("Duplicate selected hooks (the copies start disabled)"),
                  permissions=["add"])
    def duplicate(self, request, queryset):
        try:
            copied, skipped = processing.duplicate_hooks(queryset)
        except ValidationError as exc:
            self.message_user(request, _("Nothing was copied: %(error)s") % {"error": " ".join(exc.messages)},
                              messages.ERROR)
            return
        if copied:
            self.message_user(request, ngettext("%d hook copied, disabled, right after its original.",
                                                "%d hooks copied, disabled, each right after its original.",
                                                copied) % copied, messages.SUCCESS)
        if skipped:
            self.message_user(request, ngettext("%d hook was not copied: its hook is not registered.",
                                                "%d hooks were not copied: their hooks are not registered.",
                                                skipped) % skipped, messages.WARNING)

    @admin.action(description=_("Move selected hooks to the top of their stash"), permissions=["change"])
    def move_to_top(self, request, queryset):
        self._move(request, queryset, top=True)

    @admin.action(description=_("Move selected hooks to the bottom of their stash"), permissions=["change"])
    def move_to_bottom(self, request, queryset):
        self._move(request, queryset, top=False)

    def _move(self, request, queryset, top):
        count = processing.move_hooks(queryset, top)
        message = (ngettext("%d hook moved to the top.", "%d hooks moved to the top.", count) if top
                   else ngettext("%d hook moved to the bottom.", "%d hooks moved to the bottom.", count))
        self.message_user(request, message % count, messages.SUCCESS)


class DecidedByFilter(admin.RelatedFieldListFilter):
    """Items by the hook that rejected or held them, named with its stash."""

    def field_choices(self, field, request, model_admin):
        return [(config.pk, f"{config.stash.slug}: {config.title}")
                for config in HookConfig.objects.select_related("stash").order_by("stash__slug", "position")]


def trail_table(run):
    """A run's trail as a read-only table: hook, outcome, reason, duration, and the version that judged it."""
    if run is None:
        return _("Not judged yet.")
    return render_to_string("admin/stash/trail.html", {"trail": run.trail, "run": run})


def version_link(run):
    """The pipeline version that judged ``run``, linked to its page (plain, for runs older than versions)."""
    return render_to_string("admin/stash/version_link.html", {"run": run})


@admin.register(Content)
class ContentAdmin(StyledAdmin):
    list_display = ["short_id", "stash", "status_badge", "reason", "decider", "overturned_mark", "source",
                    "created_at"]
    list_display_links = ["short_id"]
    list_filter = ["stash", "status", ("decided_by", DecidedByFilter), "overturned", "source"]
    list_select_related = ["stash", "decided_by", "reviewed_by"]
    search_fields = ["reason", "payload", "idempotency_key"]
    action_form = ReviewActionForm
    # Adds the decision buttons (admin_review) above the item's fields.
    change_form_template = "admin/stash/content/change_form.html"
    actions = ["reprocess", "approve", "reject", "overturn"]
    form = ContentForm
    readonly_fields = ["status_badge", "reason", "decider", "latest_trail", "original_payload_view", "revision",
                       "processed_revision", "attempts", "source", "submitted_by", "overturned", "reviewed_by",
                       "reviewed_at", "review_note", "review_history", "created_at", "processed_at", "payload_view"]

    def get_fieldsets(self, request, obj=None):
        editable = self.has_change_permission(request, obj) or obj is None
        payload = ["stash", "payload" if editable else "payload_view"]
        if obj is None:
            return [(None, {"fields": payload + ["idempotency_key"]})]
        return [
            (None, {"fields": payload + ["original_payload_view"]}),
            (_("Verdict"), {"fields": ["status_badge", "reason", "decider", "latest_trail"]}),
            (_("Review"), {"fields": ["overturned", "reviewed_by", "reviewed_at", "review_note", "review_history"]}),
            (_("History"), {"fields": ["revision", "processed_revision", "attempts", "source", "submitted_by",
                                       "created_at", "processed_at"]}),
        ]

    def get_search_results(self, request, queryset, search_term):
        found, duplicates = super().get_search_results(request, queryset, search_term)
        try:
            pk = uuid.UUID(search_term.strip())
        except ValueError:
            return found, duplicates
        return found | queryset.filter(pk=pk), duplicates

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        return type(form.__name__, (form,), {"user": request.user})

    def get_urls(self):
        return [
            path("<path:object_id>/decide/", self.admin_site.admin_view(partial(admin_review.decide, self)),
                 name="stash_content_decide"),
            path("<path:object_id>/make-example/",
                 self.admin_site.admin_view(partial(admin_examples.make_example, self)),
                 name="stash_content_make_example"),
        ] + super().get_urls()

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context.update(admin_review.decision_context(
                self, request, obj, reverse("admin:stash_content_decide", args=[obj.pk])))
            context["may_make_example"] = (request.user.has_perm("stash.add_example")
                                           and obj.status in Example.Verdict.values)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_model(self, request, obj, form, change):
        if change:
            processing.edit(obj, obj.payload, canonical=form.canonical)
        else:
            processing.submit_item(obj, request.user, Content.Source.ADMIN, canonical=form.canonical)

    @admin.display(description=_("id"), ordering="created_at")
    def short_id(self, obj):
        return str(obj.pk)[:8]

    @admin.display(description=_("status"), ordering="status")
    def status_badge(self, obj):
        return formatting.badge(obj.status, obj.get_status_display())

    @admin.display(description=_("overturned"), ordering="overturned", empty_value="")
    def overturned_mark(self, obj):
        # Marked only where a reviewer overturned the verdict: a mark on every row would hide the few.
        if not obj.overturned:
            return ""
        return format_html('<span class="stash-flag" title="{}"><span aria-hidden="true">↺</span> {}</span>',
                           _("A reviewer overturned the hooks' verdict."), _("overturned"))

    # Not named decided_by: the admin would show the model field of that name instead.
    @admin.display(description=_("decided by"), ordering="decided_by__label")
    def decider(self, obj):
        """The reviewer when a review gave the current verdict (the hook that held or rejected the item
        beside it), else the hook."""
        hook = hook_title(obj.decided_by) if obj.decided_by_id else None
        reviewer = obj.reviewer
        if reviewer is None:
            return hook or "–"
        if hook is None:
            return format_html('{} <span class="quiet">({})</span>', reviewer.get_username(), _("in review"))
        return format_html('{} <span class="quiet">({}; {} {})</span>', reviewer.get_username(), _("in review"),
                           _("hook:"), hook)

    @admin.display(description=_("payload"))
    def payload_view(self, obj):
        return _pretty(obj.payload)

    @admin.display(description=_("payload as submitted"))
    def original_payload_view(self, obj):
        return _("unchanged by the hooks") if obj.original_payload is None else _pretty(obj.original_payload)

    @admin.display(description=_("trail of the latest run"))
    def latest_trail(self, obj):
        return trail_table(obj.runs.first())

    @admin.display(description=_("decisions by people"))
    def review_history(self, obj):
        """Every review of the item, newest first; those the hooks replaced by judging it again say when."""
        reviews = list(obj.reviews.select_related("reviewer"))
        if not reviews:
            return _("None.")
        return render_to_string("admin/stash/content/reviews.html", {"reviews": reviews})

    @admin.action(description=_("Judge selected items again with the current hooks"), permissions=["change"])
    def reprocess(self, request, queryset):
        # Items decided by people are judged again only when the confirmation's checkbox says so.
        people = processing.decided_by_people(queryset)
        if people and admin_views.CONFIRMED not in request.POST:
            return admin_views.confirm_judge_again(self, request, people)
        include = bool(people) and admin_views.INCLUDE_REVIEWED in request.POST
        count = processing.reprocess(queryset, include_reviewed=include)
        self.message_user(request, admin_views.sent_again(count), messages.SUCCESS if count else messages.WARNING)
        admin_views.say_decided_by_people(self, request, people, include)

    @admin.action(description=_("Approve selected held items"), permissions=["change"])
    def approve(self, request, queryset):
        self._review(request, queryset, processing.approve,
                     lambda n: ngettext("%d held item approved.", "%d held items approved.", n))

    @admin.action(description=_("Reject selected held items"), permissions=["change"])
    def reject(self, request, queryset):
        self._review(request, queryset, processing.reject,
                     lambda n: ngettext("%d held item rejected.", "%d held items rejected.", n))

    @admin.action(description=_("Overturn the verdict on selected items (counted against the hook)"),
                  permissions=["change"])
    def overturn(self, request, queryset):
        self._review(request, queryset, processing.overturn,
                     lambda n: ngettext("%d verdict overturned.", "%d verdicts overturned.", n))

    def _review(self, request, queryset, review, done):
        selected = queryset.count()
        count = review(queryset, request.user, request.POST.get("note", "").strip()[:1000])
        self.message_user(request, done(count) % count, messages.SUCCESS if count else messages.WARNING)
        if count < selected:
            self.message_user(request, ngettext("%d selected item was left alone: its status does not allow it.",
                                                "%d selected items were left alone: their status does not allow it.",
                                                selected - count) % (selected - count), messages.WARNING)


def _pretty(payload):
    return format_html('<pre class="stash-json">{}</pre>', json.dumps(payload, indent=2, ensure_ascii=False))


@admin.register(PipelineRun)
class PipelineRunAdmin(StyledAdmin):
    list_display = ["content", "revision", "config_version", "outcome_badge", "reason", "duration", "finished_at"]
    list_filter = ["outcome", "content__stash"]
    list_select_related = ["content"]
    fields = ["content", "revision", "hooks_version", "outcome_badge", "reason", "started_at", "finished_at",
              "duration", "trail_table"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description=_("outcome"), ordering="outcome")
    def outcome_badge(self, obj):
        return formatting.badge(obj.outcome, obj.get_outcome_display())

    @admin.display(description=_("duration"), ordering="duration_ms")
    def duration(self, obj):
        return formatting.duration(obj.duration_ms)

    @admin.display(description=_("trail"))
    def trail_table(self, obj):
        return trail_table(obj)

    @admin.display(description=_("hooks version"))
    def hooks_version(self, obj):
        return version_link(obj)
