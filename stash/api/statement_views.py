"""The statements of reasons, for staff to export: ``GET /api/statements/``."""

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.permissions import IsAdminUser

from stash import processing
from stash.api.filters import QueryForm, StashFilter
from stash.api.pagination import ContentCursorPagination
from stash.api.schema import errors
from stash.api.statement_serializers import StatementExportSerializer
from stash.models import Stash, Statement


class SinceField(forms.CharField):
    """A date or an ISO 8601 time, read as ``stash_statements --since`` reads it (in UTC)."""

    def to_python(self, value):
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        try:
            return processing.statements.parse_since(value)
        except ValueError:
            raise ValidationError("Enter a date (YYYY-MM-DD) or an ISO 8601 date and time.", code="invalid") from None


class SinceFilter(django_filters.Filter):
    field_class = SinceField


class StatementFilter(django_filters.FilterSet):
    """Query parameters of the statement list."""

    stash = StashFilter(
        queryset=Stash.objects.all(),
        to_field_name="slug",
        field_name="content__stash",
        help_text="Only statements of this stash's items (its slug).",
    )
    since = SinceFilter(
        field_name="decided_at",
        lookup_expr="gte",
        help_text="Only statements decided at or after this date (YYYY-MM-DD) or time (ISO 8601).",
    )

    class Meta:
        model = Statement
        fields = ["stash", "since"]
        form = QueryForm


class StatementCursorPagination(ContentCursorPagination):
    """Statements, newest first, in cursor pages."""

    ordering = ("-decided_at", "-id")


@extend_schema_view(
    list=extend_schema(
        summary="List statements of reasons",
        description="The statements of reasons of every stash's items, newest first, in cursor pages; staff only.",
        responses={200: StatementExportSerializer, **errors(400, 401, 403, 404)},
    )
)
class StatementViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Statements of reasons of every stash, newest first; staff only."""

    serializer_class = StatementExportSerializer
    permission_classes = [IsAdminUser]
    pagination_class = StatementCursorPagination
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend]
    filterset_class = StatementFilter

    def get_queryset(self):
        return processing.statements.exported().select_related("reviewer")
