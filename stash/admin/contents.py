"""The admin of submitted items and their pipeline runs: filters, the trail, the review decisions and judging
again."""

from functools import partial

from django.contrib import admin, messages
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _, ngettext

from stash import processing
from stash.admin import examples as admin_examples, formatting
from stash.admin.base import StyledAdmin, hook_title, pretty
from stash.admin.forms import ContentForm, ReviewActionForm
from stash.admin.statements import statements_table
from stash.admin.trails import trail_table
from stash.admin.views import (
    appeals as admin_appeals,
    failures as admin_failures,
    review as admin_review,
    tools as admin_views,
)
from stash.models import Content, Example, HookConfig, PipelineRun, id_prefix_bounds


class DecidedByFilter(admin.RelatedFieldListFilter):
    """Items by the hook that rejected or held them, named with its stash."""

    def field_choices(self, field, request, model_admin):
        return [
            (config.pk, f"{config.stash.slug}: {config.title}")
            for config in HookConfig.objects.select_related("stash").order_by("stash__slug", "position")
        ]


def version_link(run):
    """The pipeline version that judged ``run``, linked to its page (plain, for runs older than versions)."""
    return render_to_string("admin/stash/version_link.html", {"run": run})


@admin.register(Content)
class ContentAdmin(StyledAdmin):
    list_display = [
        "short_id",
        "copy_id",
        "stash",
        "status_badge",
        "reason",
        "decider",
        "overturned_mark",
        "source",
        "created_at",
    ]
    list_display_links = ["short_id"]
    list_filter = ["stash", "status", ("decided_by", DecidedByFilter), "overturned", "source"]
    list_select_related = ["stash", "decided_by", "reviewed_by"]
    search_fields = ["reason", "payload", "idempotency_key"]
    search_help_text = _(
        "Searches the reason, the payload and the idempotency key; and the ids: the first 8 characters shown "
        "here find the item, as does a whole id, with or without its dashes."
    )
    action_form = ReviewActionForm
    # Adds the decision buttons (admin_review) above the item's fields.
    change_form_template = "admin/stash/content/change_form.html"
    actions = ["reprocess", "approve", "reject", "overturn"]
    form = ContentForm

    class Media:
        js = ["stash/copy-id.js"]

    readonly_fields = [
        "status_badge",
        "reason",
        "decider",
        "latest_trail",
        "statements_view",
        "original_payload_view",
        "revision",
        "processed_revision",
        "attempts",
        "source",
        "submitted_by",
        "overturned",
        "reviewed_by",
        "reviewed_at",
        "review_note",
        "review_history",
        "created_at",
        "processed_at",
        "payload_view",
    ]

    def get_fieldsets(self, request, obj=None):
        editable = self.has_change_permission(request, obj) or obj is None
        payload = ["stash", "payload" if editable else "payload_view"]
        if obj is None:
            return [(None, {"fields": payload + ["idempotency_key"]})]
        return [
            (None, {"fields": payload + ["original_payload_view"]}),
            (_("Verdict"), {"fields": ["status_badge", "reason", "decider", "latest_trail", "statements_view"]}),
            (_("Review"), {"fields": ["overturned", "reviewed_by", "reviewed_at", "review_note", "review_history"]}),
            (
                _("History"),
                {
                    "fields": [
                        "revision",
                        "processed_revision",
                        "attempts",
                        "source",
                        "submitted_by",
                        "created_at",
                        "processed_at",
                    ]
                },
            ),
        ]

    def get_search_results(self, request, queryset, search_term):
        """The fields' matches, and the items whose id starts with the term (the list's 8 characters,
        a whole id, with or without dashes)."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        if id_prefix_bounds(search_term) is None:
            return found, duplicates
        return found | queryset.id_prefix(search_term), duplicates

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        return type(form.__name__, (form,), {"user": request.user})

    def get_urls(self):
        return [
            path(
                "appeals/",
                self.admin_site.admin_view(partial(admin_appeals.appeals, self)),
                name="stash_content_appeals",
            ),
            path(
                "review/",
                self.admin_site.admin_view(partial(admin_review.review_all, self)),
                name="stash_content_review_all",
            ),
            path(
                "failures/",
                self.admin_site.admin_view(partial(admin_failures.failures, self)),
                name="stash_content_failures",
            ),
            path(
                "failures/<slug:key>/",
                self.admin_site.admin_view(partial(admin_failures.failure_group, self)),
                name="stash_content_failure_group",
            ),
            path(
                "<path:object_id>/decide/",
                self.admin_site.admin_view(partial(admin_review.decide, self)),
                name="stash_content_decide",
            ),
            path(
                "<path:object_id>/make-example/",
                self.admin_site.admin_view(partial(admin_examples.make_example, self)),
                name="stash_content_make_example",
            ),
        ] + super().get_urls()

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context.update(
                admin_review.decision_context(self, request, obj, reverse("admin:stash_content_decide", args=[obj.pk]))
            )
            context["may_make_example"] = (
                request.user.has_perm("stash.add_example") and obj.status in Example.Verdict.values
            )
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_model(self, request, obj, form, change):
        if change:
            processing.edit_payload(obj, obj.payload, canonical=form.canonical)
        else:
            processing.submit_item(obj, request.user, Content.Source.ADMIN, canonical=form.canonical)

    @admin.display(description=_("id"), ordering="created_at")
    def short_id(self, obj):
        return str(obj.pk)[:8]

    @admin.display(description=_("full id"))
    def copy_id(self, obj):
        """A button that copies the item's whole id (``copy-id.js``): the list shows only its start."""
        return render_to_string("admin/stash/copy_id.html", {"item": obj})

    @admin.display(description=_("status"), ordering="status")
    def status_badge(self, obj):
        return formatting.badge(obj.status, obj.get_status_display())

    @admin.display(description=_("overturned"), ordering="overturned", empty_value="")
    def overturned_mark(self, obj):
        # Marked only where a reviewer overturned the verdict: a mark on every row would hide the few.
        if not obj.overturned:
            return ""
        return format_html(
            '<span class="stash-flag" title="{}"><span aria-hidden="true">↺</span> {}</span>',
            _("A reviewer overturned the hooks' verdict."),
            _("overturned"),
        )

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
        return format_html(
            '{} <span class="quiet">({}; {} {})</span>', reviewer.get_username(), _("in review"), _("hook:"), hook
        )

    @admin.display(description=_("payload"))
    def payload_view(self, obj):
        return pretty(obj.payload)

    @admin.display(description=_("payload as submitted"))
    def original_payload_view(self, obj):
        return _("unchanged by the hooks") if obj.original_payload is None else pretty(obj.original_payload)

    @admin.display(description=_("trail of the latest run"))
    def latest_trail(self, obj):
        return trail_table(obj.runs.first())

    @admin.display(description=_("statements of reasons"))
    def statements_view(self, obj):
        return statements_table(obj)

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
        since = timezone.now()
        by_stash = processing.reprocess_by_stash(queryset, include_reviewed=include)
        admin_views.say_sent_again(self, request, by_stash, since, request.GET.get("stash__id__exact"))
        admin_views.say_decided_by_people(self, request, people, include)

    @admin.action(description=_("Approve selected held items"), permissions=["change"])
    def approve(self, request, queryset):
        self._review(
            request,
            queryset,
            processing.approve,
            lambda n: ngettext("%d held item approved.", "%d held items approved.", n),
        )

    @admin.action(description=_("Reject selected held items"), permissions=["change"])
    def reject(self, request, queryset):
        self._review(
            request,
            queryset,
            processing.reject,
            lambda n: ngettext("%d held item rejected.", "%d held items rejected.", n),
        )

    @admin.action(
        description=_("Overturn the verdict on selected items (counted against the hook)"), permissions=["change"]
    )
    def overturn(self, request, queryset):
        self._review(
            request,
            queryset,
            processing.overturn,
            lambda n: ngettext("%d verdict overturned.", "%d verdicts overturned.", n),
        )

    def _review(self, request, queryset, review, done):
        selected = queryset.count()
        count = review(queryset, request.user, request.POST.get("note", "").strip()[:1000])
        self.message_user(request, done(count) % count, messages.SUCCESS if count else messages.WARNING)
        if count < selected:
            self.message_user(
                request,
                ngettext(
                    "%d selected item was left alone: its status does not allow it.",
                    "%d selected items were left alone: their status does not allow it.",
                    selected - count,
                )
                % (selected - count),
                messages.WARNING,
            )


@admin.register(PipelineRun)
class PipelineRunAdmin(StyledAdmin):
    list_display = ["content", "revision", "config_version", "outcome_badge", "reason", "duration", "finished_at"]
    list_filter = ["outcome", "content__stash"]
    list_select_related = ["content"]
    fields = [
        "content",
        "revision",
        "hooks_version",
        "outcome_badge",
        "reason",
        "started_at",
        "finished_at",
        "duration",
        "trail_table",
    ]
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

    @admin.display(description=_("pipeline version"))
    def hooks_version(self, obj):
        return version_link(obj)
