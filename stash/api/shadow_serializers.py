"""Serializers of shadows: what starting one takes, and a shadow with its agreement report, for the schema.

``processing.start_shadow`` reads and checks the request itself (each bad field named); these describe
the shapes for the schema and the answers.
"""

from rest_framework import serializers

from stash import processing
from stash.api.pipeline_serializers import ExampleResultSerializer, PipelineDocumentSerializer


class ShadowStartSerializer(serializers.Serializer):
    """A shadow to start: a pipeline document or a saved version (one of them), on a share of live saves,
    for a count of items or a number of minutes (one of them at least)."""

    document = PipelineDocumentSerializer(
        required=False, help_text="The pipeline to run, as an export or a draft has it (its examples are not used)."
    )
    version = serializers.IntegerField(required=False, min_value=1, help_text="A saved version of the stash to run.")
    percent = serializers.IntegerField(min_value=1, max_value=100, help_text="The share of live saves it judges.")
    count = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=processing.SHADOW_MAX_COUNT,
        help_text="It finishes after this many items.",
    )
    minutes = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=processing.SHADOW_MAX_MINUTES,
        help_text="It finishes after this many minutes.",
    )


class ShadowDisagreementSideSerializer(serializers.Serializer):
    verdict = serializers.CharField()
    decided_by = serializers.CharField(help_text="The hook that rejected or held it; blank if none did.")
    trail = serializers.ListField(child=serializers.DictField())


class ShadowDisagreementSerializer(serializers.Serializer):
    content = serializers.UUIDField()
    revision = serializers.IntegerField()
    live = ShadowDisagreementSideSerializer()
    shadow = ShadowDisagreementSideSerializer()


class ShadowDeciderSerializer(serializers.Serializer):
    live = serializers.CharField(help_text="The hook that decided the live run (blank: none, it was accepted).")
    shadow = serializers.CharField(help_text="The hook that decided the shadow's run.")
    count = serializers.IntegerField()


class ShadowTimeSerializer(serializers.Serializer):
    mean_ms = serializers.FloatField(allow_null=True)
    p95_ms = serializers.FloatField(allow_null=True)


class ShadowReportSerializer(serializers.Serializer):
    items = serializers.IntegerField(help_text="Items the shadow judged.")
    agreed = serializers.IntegerField()
    disagreed = serializers.IntegerField()
    matrix = serializers.DictField(
        child=serializers.IntegerField(), help_text='Items by "<live verdict>/<shadow verdict>".'
    )
    deciders = ShadowDeciderSerializer(many=True, help_text="The hooks that decided differently, most often first.")
    disagreements = ShadowDisagreementSerializer(many=True, help_text="The latest disagreeing items, both trails.")
    time = ShadowTimeSerializer(help_text="The shadow's time per item.")


class ShadowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    stash = serializers.SlugField()
    status = serializers.ChoiceField(choices=["running", "stopped", "finished", "promoted"])
    version = serializers.IntegerField(allow_null=True, help_text="The version it runs; null: a draft.")
    percent = serializers.IntegerField()
    count = serializers.IntegerField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    started_by = serializers.CharField(allow_null=True)
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)
    promoted_version = serializers.IntegerField(allow_null=True)
    report = ShadowReportSerializer()
    document = PipelineDocumentSerializer(required=False, help_text="One shadow's: the pipeline it runs.")


class PromotedSerializer(serializers.Serializer):
    shadow = ShadowSerializer()
    plan = serializers.DictField(help_text="The import that made it live: changes, examples, the new version.")


class PromoteRefusedSerializer(serializers.Serializer):
    """A promotion refused: the golden examples it breaks (``examples``), or a shadow promoted already."""

    detail = serializers.CharField()
    examples = ExampleResultSerializer(
        many=True, required=False, help_text="The examples it breaks; left out when it was promoted already."
    )
