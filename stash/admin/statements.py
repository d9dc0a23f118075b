"""Statements of reasons in the admin: read-only, on their item's page."""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from stash.models import Statement


class StatementInline(admin.TabularInline):
    """An item's statements of reasons, newest first: what its submitter was told, and when it ended."""

    model = Statement
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False
    verbose_name_plural = _("statements of reasons")
    fields = [
        "decided_at",
        "kind",
        "restriction",
        "text",
        "reason_code",
        "ground",
        "ground_reference",
        "category",
        "automated_detection",
        "automated_decision",
        "reviewer",
        "appeal_until",
        "ended_at",
    ]
    readonly_fields = fields
    ordering = ["-decided_at", "-pk"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("reviewer")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
