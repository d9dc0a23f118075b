"""Serializers of pipelines as code: pipeline documents, import plans, versions and golden examples.

A document is read by ``processing.import_document`` itself (it names each faulty hook and field);
the document serializers here describe its shape for the schema and the answers.
"""

from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from stash import processing
from stash.api.fields import ParamsField, PayloadField, ServiceAnswersField
from stash.api.serializers import ModelSerializer, QueryParamsSerializer
from stash.core import documents, pipeline
from stash.models import Example, HookConfig, PipelineVersion, Stash
from stash.processing import limits

_OPTIONAL = {"required": False}


class DocumentStashSerializer(ModelSerializer):
    """A document's stash settings. An import sets those it gives and leaves the others."""

    slug = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="The stash it was exported from: an import never renames a stash, and ignores it.",
    )

    class Meta:
        model = Stash
        fields = list(documents.STASH_FIELDS)
        extra_kwargs = {name: _OPTIONAL for name in documents.STASH_FIELDS if name != "slug"}


class DocumentHookSerializer(ModelSerializer):
    """One hook of a document, matched on import to the stash's hook of the same hook name and label
    (which keeps its id, counters and secret params); the others are added or removed."""

    params = ParamsField(required=False)
    position = serializers.IntegerField(
        required=False, help_text="Hooks run in increasing position (default: in the order listed); no two share one."
    )

    class Meta:
        model = HookConfig
        fields = list(documents.HOOK_FIELDS)
        extra_kwargs = {"hook": {"help_text": "A registered hook (see /api/hooks/)."}}


class DocumentExampleSerializer(ModelSerializer):
    """A golden example in a document: a document that has ``examples`` replaces the stash's."""

    payload = PayloadField()
    service_answers = ServiceAnswersField(required=False)

    class Meta:
        model = Example
        fields = list(documents.EXAMPLE_FIELDS)


class PipelineDocumentSerializer(serializers.Serializer):
    """A stash's pipeline as a document: its settings, its hooks in order and its golden examples;
    no config ids and no secret params (``writeOnly`` in a hook's params schema)."""

    format = serializers.ChoiceField(choices=[documents.FORMAT])
    format_version = serializers.ChoiceField(choices=[documents.FORMAT_VERSION])
    stash = DocumentStashSerializer(required=False)
    hooks = DocumentHookSerializer(many=True)
    examples = DocumentExampleSerializer(
        many=True,
        required=False,
        help_text=("The golden examples (an export lists them all). Left out: an import keeps the stash's."),
    )


class ImportParamsSerializer(QueryParamsSerializer):
    """Query parameters of an import."""

    dry_run = serializers.BooleanField(
        default=False, help_text="Only say what would change (and how the golden examples fare); change nothing."
    )


class ExampleResultSerializer(serializers.Serializer):
    """What the pipeline did with one golden example, and how that differs from what it expects."""

    name = serializers.CharField()
    passed = serializers.BooleanField()
    status = serializers.ChoiceField(
        choices=["passed", "breaks", "already failing", "not run in time", "failed"],
        help_text="In a change's check, `breaks`: it passed on the live version and fails on the new one (only "
        "these refuse a change); `already failing`: it fails on both; `not run in time`: it was not "
        "reached within STASH_EXAMPLES_TIMEOUT; `failed`: it fails and there is no live answer to compare.",
    )
    problems = serializers.ListField(child=serializers.CharField(), help_text="What differs; empty if it passed.")
    expected = serializers.ChoiceField(choices=Example.Verdict.choices, help_text="The verdict it expects.")
    verdict = serializers.ChoiceField(
        choices=["", pipeline.ACCEPTED, pipeline.REJECTED, pipeline.HELD, pipeline.WAITING],
        help_text="The verdict it got (blank: not run in time).",
    )
    reason = serializers.CharField(allow_blank=True)
    code = serializers.CharField(allow_blank=True, help_text="The reason code it got.")
    hook = serializers.CharField(allow_blank=True, help_text="The hook that decided (label, or hook name).")
    expected_code = serializers.CharField(allow_blank=True, help_text="The reason code it expects, if any.")
    expected_hook = serializers.CharField(allow_blank=True, help_text="The hook it expects to decide, if any.")
    given = serializers.ListField(
        child=serializers.CharField(),
        help_text="The asynchronous hooks whose service's answer the example gave (its service_answers), "
        "as the run took them: `Vendor: dropped`.",
    )


class ImportPlanSerializer(serializers.Serializer):
    """What an import did (or, dry, would do)."""

    stash = serializers.CharField(help_text="The stash's slug.")
    created = serializers.BooleanField()
    changes = serializers.ListField(child=serializers.CharField(), help_text="What changes, one phrase each.")
    applied = serializers.BooleanField(help_text="False for a dry run, or when nothing changes.")
    version = serializers.IntegerField(allow_null=True, help_text="The version the change made, if applied.")
    examples = ExampleResultSerializer(
        many=True,
        help_text="The golden examples, run through the new pipeline (each's `status` compares it with the live one).",
    )


class ExamplesBrokenSerializer(serializers.Serializer):
    """A change refused because it breaks golden examples of a stash that blocks such changes."""

    detail = serializers.CharField()
    examples = ExampleResultSerializer(many=True, help_text="The examples it breaks.")


class ExampleRunSerializer(serializers.Serializer):
    passed = serializers.BooleanField(help_text="Every example passed.")
    results = ExampleResultSerializer(many=True)


class VersionSerializer(ModelSerializer):
    """A version of a stash's pipeline: one change, who made it, when and what it changed."""

    created_by = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who made the change; null for commands and workers.",
    )

    class Meta:
        model = PipelineVersion
        fields = ["number", "created_at", "created_by", "summary"]
        read_only_fields = fields
        extra_kwargs = {
            "number": {
                "help_text": "The stash's config_version it made; a run's config_version "
                "names the version that judged it."
            }
        }


class VersionDetailSerializer(VersionSerializer):
    document = serializers.SerializerMethodField(help_text="The pipeline as this version left it (no secrets).")

    class Meta(VersionSerializer.Meta):
        fields = [*VersionSerializer.Meta.fields, "document"]
        read_only_fields = fields

    @extend_schema_field(PipelineDocumentSerializer)
    def get_document(self, version):
        return processing.shown_version(version)


def _version_numbers(**kwargs):
    # "from" is a keyword: the fields are named in a dict.
    return {
        "from": serializers.IntegerField(help_text="The earlier version.", **kwargs),
        "to": serializers.IntegerField(help_text="The later version.", **kwargs),
    }


class VersionDiffParamsSerializer(QueryParamsSerializer):
    """The two versions to compare, each one of the stash's (``context["stash"]``)."""

    def get_fields(self):
        return _version_numbers(min_value=1, max_value=2**31 - 1)

    def validate(self, attrs):
        stash = self.context["stash"]
        known = set(stash.versions.filter(number__in=attrs.values()).values_list("number", flat=True))
        missing = {
            name: [f"{stash.slug} has no version {number}."] for name, number in attrs.items() if number not in known
        }
        if missing:
            raise serializers.ValidationError(missing)
        return attrs


class VersionDiffSerializer(serializers.Serializer):
    """What changed from one version to another."""

    def get_fields(self):
        return {
            **_version_numbers(),
            "changes": serializers.ListField(child=serializers.CharField()),
            "diff": serializers.CharField(allow_blank=True, help_text="A unified diff of the two documents."),
        }


class ExampleSerializer(ModelSerializer):
    """A golden example of a stash: a payload and the verdict its pipeline must give it (and, if set,
    the reason code and the deciding hook). No two examples of a stash share a name."""

    payload = PayloadField()
    service_answers = ServiceAnswersField(required=False)
    content = serializers.PrimaryKeyRelatedField(
        read_only=True, allow_null=True, help_text="The item it was made from, if any."
    )
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="Who added it."
    )

    class Meta:
        model = Example
        fields = [
            "id",
            "name",
            "payload",
            "verdict",
            "reason_code",
            "hook",
            "service_answers",
            "content",
            "created_by",
            "created_at",
        ]
        read_only_fields = ["id", "content", "created_by", "created_at"]

    def validate_name(self, value):
        if self._taken(value):
            raise serializers.ValidationError(self._taken_message(value))
        return value

    def create(self, validated_data):
        limits.check_new_examples(validated_data["stash"].pk)
        return self._saved(Example(**validated_data))

    def update(self, instance, validated_data):
        for name, value in validated_data.items():
            setattr(instance, name, value)
        return self._saved(instance)

    def _taken(self, name):
        others = Example.objects.filter(stash=self.context["stash"], name=name)
        return others.exclude(pk=self.instance.pk).exists() if self.instance is not None else others.exists()

    @staticmethod
    def _taken_message(name):
        return f"This stash already has an example named {name!r}."

    def _saved(self, example):
        """Check the payload against the stash's limit, and save. Raises Django's ``ValidationError``
        per field (the API answers 400, or 413 for a payload over the limit)."""
        example.full_clean(exclude=["content", "created_by"], validate_constraints=False)
        try:
            with transaction.atomic():
                example.save()
        except IntegrityError as exc:  # the same name, saved meanwhile
            raise serializers.ValidationError({"name": [self._taken_message(example.name)]}) from exc
        return example
