"""Serializers of the failure store: its filters, a group of failures, a re-drive's result."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from stash.api.fields import StashSlugField
from stash.api.serializers import QueryParamsSerializer, TrailEntrySerializer
from stash.models import Failure
from stash.processing.failures import check_window
from stash.processing.redriving import OUTCOMES


class FailureFiltersSerializer(QueryParamsSerializer):
    """Query parameters of the failure store's list."""

    stash = StashSlugField(required=False, help_text="Only this stash's failures (its slug).")
    since = serializers.DateTimeField(required=False, help_text="Only failures seen at or after this time (ISO 8601).")
    until = serializers.DateTimeField(required=False, help_text="Only failures seen at or before this time (ISO 8601).")

    def validate(self, attrs):
        check_window(attrs.get("since"), attrs.get("until"))
        return attrs


class FailureExampleSerializer(serializers.ModelSerializer):
    """The latest failure of a group."""

    class Meta:
        model = Failure
        fields = ["content", "revision", "message", "at"]


class FailureGroupSerializer(serializers.Serializer):
    """A group of failures: one stash's hook config (or hook), error type and pipeline version."""

    key = serializers.CharField(help_text="The group's key: re-drive it at failures/<key>/redrive/.")
    stash = serializers.SlugField(source="stash.slug")
    hook = serializers.CharField(allow_blank=True, help_text="The registered hook; blank for items given up on.")
    label = serializers.CharField(allow_blank=True)
    config_id = serializers.IntegerField(allow_null=True, help_text="The hook config (null once deleted).")
    kind = serializers.ChoiceField(choices=Failure.Kind.choices)
    error_type = serializers.CharField(help_text="The exception's type, `timeout`, or `worker stopped`.")
    config_version = serializers.IntegerField(help_text="The pipeline version that failed.")
    count = serializers.IntegerField(help_text="Failures in the group (within the filters).")
    items = serializers.IntegerField(help_text="Distinct items among them.")
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    redriven_at = serializers.DateTimeField(allow_null=True, help_text="When the group was last re-driven.")
    example = FailureExampleSerializer(help_text="The latest failure of the group.")


class FailureGroupDetailSerializer(FailureGroupSerializer):
    """A group with the trail of its latest failure and what became of its last re-drive (both read
    beside the group: the view passes them in the context)."""

    trail = serializers.SerializerMethodField(help_text="The failed run's trail (null if it is no longer kept).")
    outcome = serializers.SerializerMethodField(
        help_text=f"What became of the items since the last re-drive: {', '.join(OUTCOMES)} (empty: never re-driven)."
    )

    @extend_schema_field(TrailEntrySerializer(many=True, allow_null=True))
    def get_trail(self, group):
        return self.context["trail"]

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_outcome(self, group):
        return self.context["outcome"]


class RedriveSerializer(serializers.Serializer):
    """What a re-drive did."""

    sent = serializers.IntegerField(help_text="Items sent to be judged again on the current pipeline.")
    left_out = serializers.IntegerField(help_text="Items left out: decided by people (see include_reviewed).")
    decided_by = serializers.CharField(allow_blank=True, help_text="Who decided the items left out or replaced.")
    outcome = serializers.DictField(
        child=serializers.IntegerField(), help_text=f"What became of the items so far: {', '.join(OUTCOMES)}."
    )
