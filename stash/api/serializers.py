"""Serializers: what the API reads and writes, each with its fields listed."""

import functools

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models as dj_models
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import NotFound

from stash import models, processing
from stash.api.appeal_serializers import AppealSerializer
from stash.api.fields import (
    BooleanField,
    IntegerField,
    ParamsField,
    ParsedPayloadField,
    PayloadField,
    StashSlugField,
    StringField,
    SubmissionStashField,
)
from stash.api.statement_serializers import StatementSerializer
from stash.core import pipeline, registry
from stash.models import Content, Delivery, HookConfig, PipelineRun, Stash

#: A query parameter given blank (``?stash=``) is refused, not read as absent.
BLANK_PARAMETER = "Give a value, or leave the parameter out."


def represent(serializer_class, instance):
    """``serializer_class(instance).data`` for a serializer that needs no context, from one instance
    of the class per process: building a model serializer's fields costs some twenty times what
    rendering one item does, and rendering changes nothing on the serializer (``ListSerializer``
    reuses its child for every item the same way)."""
    return _reusable(serializer_class).to_representation(instance)


@functools.cache
def _reusable(serializer_class):
    return serializer_class()


class ErrorSerializer(serializers.Serializer):
    """An error that is not about one field (401, 403, 404, 405, 409, 413, 415, 429)."""

    detail = serializers.CharField()


class ModelSerializer(serializers.ModelSerializer):
    """DRF's, with the model's text, boolean and integer fields taking values of that JSON type only
    (the API reads JSON only)."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        dj_models.CharField: StringField,
        dj_models.TextField: StringField,
        dj_models.BooleanField: BooleanField,
        **{
            field: IntegerField
            for field in (
                dj_models.IntegerField,
                dj_models.PositiveIntegerField,
                dj_models.PositiveBigIntegerField,
                dj_models.PositiveSmallIntegerField,
                dj_models.BigIntegerField,
                dj_models.SmallIntegerField,
            )
        },
    }


class StashSerializer(ModelSerializer):
    effective_queue = serializers.CharField(
        read_only=True, help_text="The Celery queue its items go to: `queue`, or the default."
    )

    class Meta:
        model = Stash
        fields = [
            "slug",
            "name",
            "description",
            "is_active",
            "allow_anonymous",
            "on_error",
            "max_payload_bytes",
            "max_waiting",
            "config_version",
            "queue_head",
            "queue",
            "effective_queue",
        ]
        read_only_fields = fields


class TrailEntrySerializer(serializers.Serializer):
    """What one hook did to one item."""

    config_id = serializers.IntegerField(allow_null=True, help_text="The HookConfig that ran.")
    hook = serializers.CharField(help_text="The registered hook's name.")
    label = serializers.CharField(allow_blank=True)
    position = serializers.IntegerField()
    outcome = serializers.ChoiceField(choices=pipeline.OUTCOMES)
    code = serializers.CharField(allow_blank=True, help_text="A short reason code, e.g. missing_fields.")
    message = serializers.CharField(allow_blank=True, help_text="The reason, in words.")
    duration_ms = serializers.FloatField()
    would = serializers.ChoiceField(
        choices=["", "drop", "hold", "transform"],
        default="",
        help_text="What an observing hook would have done; blank otherwise.",
    )
    cached = serializers.BooleanField(
        default=False, help_text="The hook was not called: its outcome for the same input was reused (cache_seconds)."
    )


class RunSerializer(ModelSerializer):
    trail = TrailEntrySerializer(many=True, read_only=True)

    class Meta:
        model = PipelineRun
        fields = [
            "revision",
            "config_version",
            "outcome",
            "reason",
            "started_at",
            "finished_at",
            "duration_ms",
            "trail",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "config_version": {
                "help_text": "The pipeline version that judged it: stashes/<slug>/versions/<config_version>/."
            }
        }


class HookRefSerializer(ModelSerializer):
    class Meta:
        model = HookConfig
        fields = ["id", "hook", "label"]
        read_only_fields = fields


class ContentSerializer(ModelSerializer):
    """An item: what was submitted, and where its judging stands."""

    stash = StashSlugField()
    payload = PayloadField()
    decided_by = HookRefSerializer(
        read_only=True, allow_null=True, help_text="The hook that rejected or held the item."
    )
    submitted_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    reviewed_by = serializers.SerializerMethodField(
        help_text="The person whose review gave the item its current status (decided_by stays the hook that "
        "held or rejected it); null when the hooks gave it."
    )

    class Meta:
        model = Content
        fields = [
            "id",
            "stash",
            "payload",
            "status",
            "reason",
            "decided_by",
            "reviewed_by",
            "revision",
            "processed_revision",
            "queue_seq",
            "source",
            "submitted_by",
            "created_at",
            "updated_at",
            "processed_at",
        ]
        read_only_fields = [
            "id",
            "status",
            "reason",
            "revision",
            "processed_revision",
            "queue_seq",
            "source",
            "created_at",
            "updated_at",
            "processed_at",
        ]

    def get_reviewed_by(self, content) -> str | None:
        reviewer = content.reviewer
        return reviewer.get_username() if reviewer is not None else None


class DeliverySerializer(ModelSerializer):
    """One sink delivery of one of the item's verdicts: how it went."""

    hook_config = serializers.IntegerField(source="config_id", help_text="The sink's HookConfig.")
    label = serializers.CharField(source="config.title", help_text="The sink's label, or its hook's name.")
    hook = serializers.CharField(source="config.hook", help_text="The registered hook's name.")

    class Meta:
        model = Delivery
        fields = [
            "hook_config",
            "label",
            "hook",
            "revision",
            "event",
            "status",
            "attempts",
            "last_error",
            "created_at",
            "updated_at",
            "delivered_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "event": {"help_text": "The callback delivered: on_accept, on_reject, on_hold, on_error, on_reversed."},
            "attempts": {"help_text": "Calls made so far (the first, then each retry)."},
            "last_error": {"help_text": "Why the latest failed attempt failed; blank if none did."},
        }


class ContentDetailSerializer(ContentSerializer):
    """An item with its original payload (if transforms changed it), its latest run's trail and its
    sinks' deliveries."""

    stash = StashSlugField(read_only=True)
    run = serializers.SerializerMethodField(help_text="The latest run of the hooks over this item, with its trail.")
    statement = serializers.SerializerMethodField(
        help_text="The statement of reasons of a rejected or held item; null otherwise."
    )

    appeal = serializers.SerializerMethodField(help_text="The appeal of the current decision; null when none was made.")
    deliveries = serializers.SerializerMethodField(
        help_text="Each sink delivery of its verdicts (after the verdict, by their own task), oldest first."
    )

    class Meta(ContentSerializer.Meta):
        fields = [*ContentSerializer.Meta.fields, "original_payload", "run", "statement", "appeal", "deliveries"]
        read_only_fields = [*ContentSerializer.Meta.read_only_fields, "original_payload"]

    @extend_schema_field(RunSerializer(allow_null=True))
    def get_run(self, content):
        run = content.runs.first()
        return RunSerializer(run).data if run is not None else None

    @extend_schema_field(StatementSerializer(allow_null=True))
    def get_statement(self, content):
        statement = processing.statements.current(content)
        return StatementSerializer(statement).data if statement is not None else None

    @extend_schema_field(AppealSerializer(allow_null=True))
    def get_appeal(self, content):
        appeal = processing.appeal_of(content)
        return AppealSerializer(appeal).data if appeal is not None else None

    @extend_schema_field(DeliverySerializer(many=True))
    def get_deliveries(self, content):
        return DeliverySerializer(processing.deliveries_of(content.pk), many=True).data


class SubmitSerializer(serializers.Serializer):
    """What a submission reads: ``ContentSerializer``'s writable fields (the schema shows those),
    declared so that reading a request builds no model fields."""

    stash = SubmissionStashField()
    payload = ParsedPayloadField()


class ContentEditSerializer(serializers.Serializer):
    """A new payload for an item: a new revision, judged again."""

    payload = ParsedPayloadField()


class QueryParamsSerializer(serializers.Serializer):
    """Query parameters; one given blank (``?stash=``) is refused, not read as absent."""

    def to_internal_value(self, data):
        blank = {name: [BLANK_PARAMETER] for name in self.fields if name in data and data[name] == ""}
        if blank:
            raise serializers.ValidationError(blank)
        return super().to_internal_value(data)


class PageParamsSerializer(QueryParamsSerializer):
    """The page size of a list (its cursor is DRF's to read)."""

    MAX_PAGE_SIZE = 500

    page_size = serializers.IntegerField(min_value=1, max_value=MAX_PAGE_SIZE, required=False)


class ReprocessParamsSerializer(QueryParamsSerializer):
    """Query parameters of judging an item again."""

    include_reviewed = serializers.BooleanField(
        default=False,
        help_text="Also when a person's decision gave the item its status: the decision is replaced "
        "(kept in the item's history). Otherwise such an item answers 409.",
    )


class BulkSubmitSerializer(serializers.Serializer):
    """Up to 1,000 payloads for one stash, saved all or none."""

    stash = StashSlugField()
    items = serializers.ListField(child=ParsedPayloadField(), min_length=1, max_length=processing.BULK_LIMIT)


class BulkResultSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    ids = serializers.ListField(child=serializers.UUIDField())


class QueueParamsSerializer(QueryParamsSerializer):
    """Query parameters of a stash's queue."""

    after = serializers.IntegerField(
        min_value=0, max_value=2**63 - 1, default=0, help_text="The last queue number read; 0 from the start."
    )
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=100, help_text="Items per page.")


class QueueItemSerializer(ModelSerializer):
    seq = serializers.IntegerField(source="queue_seq", help_text="Queue number: increases in acceptance order.")

    class Meta:
        model = Content
        fields = ["seq", "id", "payload", "revision", "source", "created_at", "processed_at"]
        read_only_fields = fields


class QueuePageSerializer(serializers.Serializer):
    results = QueueItemSerializer(many=True)
    next_after = serializers.IntegerField(help_text="Pass as `after` for the next page.")
    next = serializers.URLField(help_text="The next page (may be empty until more items are accepted).")


VERBOSE_HELP = (
    "Run every enabled hook, even after one rejects or holds (that one is marked `stopped`, the "
    "later ones `after_stop`), and show the payload after each transform. The verdict is the same."
)


class SimulateParamsSerializer(QueryParamsSerializer):
    """Query parameters of a simulation."""

    verbose = serializers.BooleanField(default=False, help_text=VERBOSE_HELP + " As `verbose` in the body.")


class SimulateSerializer(serializers.Serializer):
    """A payload, or the id of an item of the stash to run on the payload it was submitted with; not both."""

    payload = ParsedPayloadField(required=False, help_text="The payload to try. Give it, or `content_id`.")
    content_id = serializers.UUIDField(
        required=False,
        help_text=(
            "Run on the payload this item of the stash was submitted with, before any transform, instead "
            "(one you may read)."
        ),
    )
    verbose = serializers.BooleanField(default=False, help_text=VERBOSE_HELP)

    def validate(self, attrs):
        given = [name for name in ("payload", processing.CONTENT_FIELD) if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                "Give a payload or a content_id." if not given else "Give a payload or a content_id, not both."
            )
        return attrs


class SimulatedStepSerializer(TrailEntrySerializer):
    """What one hook did in a simulation; a verbose one says more."""

    stopped = serializers.BooleanField(
        required=False, help_text=("Verbose only: this hook decided the run (it would have ended there).")
    )
    after_stop = serializers.BooleanField(
        required=False,
        help_text=("Verbose only: the run was decided before this hook, which ran only because of verbose mode."),
    )
    payload = serializers.DictField(
        required=False,
        allow_null=True,
        help_text=(
            "Verbose only: the payload this transform produced (an observing one: would have); null for filters "
            "and for transforms that changed nothing."
        ),
    )


class SimulationSerializer(serializers.Serializer):
    """What the stash's hooks would do to a payload; nothing is saved."""

    verdict = serializers.ChoiceField(
        choices=[pipeline.ACCEPTED, pipeline.REJECTED, pipeline.HELD, pipeline.WAITING],
        help_text="waiting: an asynchronous hook would wait for its service (which simulate never asks).",
    )
    reason = serializers.CharField(allow_blank=True)
    code = serializers.CharField(allow_blank=True)
    decided_by = serializers.IntegerField(allow_null=True, help_text="The HookConfig that rejected or held it.")
    transformed = serializers.BooleanField()
    payload = serializers.DictField(help_text="The payload after transforms (up to the hook that decided).")
    duration_ms = serializers.FloatField()
    verbose = serializers.BooleanField(help_text="Whether every hook ran (see the request's `verbose`).")
    trail = SimulatedStepSerializer(many=True)


class PrecisionSerializer(serializers.Serializer):
    """People's decisions on the items a hook rejected or held, over one window."""

    precision = serializers.FloatField(allow_null=True, help_text="confirmed / decisions; null with no decision.")
    decisions = serializers.IntegerField(help_text="Items people decided in the window: confirmed + reversed.")
    confirmed = serializers.IntegerField(help_text="Left rejected: a held item rejected, a rejection upheld on appeal.")
    reversed = serializers.IntegerField(help_text="Accepted: a held item approved, an overturn, an appeal reversed.")


class HookConfigListSerializer(serializers.ListSerializer):
    """The hooks of a stash, their precision read for them all in one query."""

    def to_representation(self, data):
        configs = list(data.all() if isinstance(data, dj_models.manager.BaseManager) else data)
        figures = processing.hook_precision(configs)
        for config in configs:
            config.precision_figures = figures.get(config.pk)
        return super().to_representation(configs)


class HookConfigSerializer(ModelSerializer):
    """One configured hook of a stash. ``hook`` is one of the registered names."""

    params = ParamsField(required=False)
    missing = serializers.BooleanField(
        source="is_missing", read_only=True, help_text="The hook's name is no longer registered."
    )
    precision = serializers.SerializerMethodField(
        help_text="For an enforcing hook, people's decisions on the items it rejected or held over the last 7 "
        "and 30 days (docs/hooks.md, Precision); null for an observing hook."
    )

    class Meta:
        model = HookConfig
        fields = [
            "id",
            "hook",
            "label",
            "params",
            "enabled",
            "mode",
            "position",
            "on_error",
            "condition",
            "timeout_ms",
            "cache_seconds",
            "min_precision",
            "min_precision_count",
            "auto_observed_at",
            "precision",
            "missing",
            "runs_count",
            "kept_count",
            "changed_count",
            "dropped_count",
            "held_count",
            "errors_count",
            "time_total_us",
            "overturned_count",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "id",
            "position",
            *HookConfig.COUNTER_FIELDS,
            "auto_observed_at",
            "created_at",
            "updated_at",
        ]
        list_serializer_class = HookConfigListSerializer

    @extend_schema_field(
        inline_serializer(
            "PrecisionWindows", {"7d": PrecisionSerializer(), "30d": PrecisionSerializer()}, allow_null=True
        )
    )
    def get_precision(self, obj):
        if obj.pk is None:
            return None
        figures = getattr(obj, "precision_figures", None)
        if not hasattr(obj, "precision_figures"):
            figures = processing.hook_precision([obj]).get(obj.pk)
        if not figures:
            return None
        return {f"{days}d": figure.as_dict() for days, figure in sorted(figures.items())}

    def get_fields(self):
        fields = super().get_fields()
        # The registry is code: its names are read on every request, never frozen in a schema.
        fields["hook"] = serializers.ChoiceField(
            choices=[hook.name for hook in registry.all()], help_text="A registered hook (see /api/hooks/)."
        )
        return fields

    def create(self, validated_data):
        return self._saved(HookConfig(**validated_data))

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["params"] = registry.shown_params(instance.hook, data.get("params"))
        return data

    def update(self, instance, validated_data):
        if "params" in validated_data:
            validated_data["params"] = processing.merge_secrets(
                instance, validated_data.get("hook", instance.hook), validated_data["params"]
            )
        for name, value in validated_data.items():
            setattr(instance, name, value)
        return self._saved(instance)

    @staticmethod
    def _saved(config):
        """Save as the admin does (``processing.save_hook``: under the stash's lock, a new one counted
        against the stash's limit there): the fields were checked by this serializer, and the save
        checks hook, params and condition, so each is checked once.

        Raises ``ValidationError`` per field for those (the limit's is the handler's
        ``non_field_errors``), and ``NotFound`` if the config was deleted since it was read (a
        concurrent DELETE).
        """
        try:
            processing.save_hook(config)
        except DjangoValidationError as exc:
            if not hasattr(exc, "error_dict"):
                raise  # not about a field: the exception handler answers it as a 400
            raise serializers.ValidationError(exc.message_dict) from exc
        except HookConfig.DoesNotExist as exc:
            raise NotFound(str(exc)) from exc
        return config


class ReorderSerializer(serializers.Serializer):
    order = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        help_text="The ids of every hook of the stash, in their new order.",
    )
    config_version = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, help_text="The stash's config_version this order was based on."
    )


class HookOrderSerializer(serializers.Serializer):
    config_version = serializers.IntegerField()
    hooks = HookConfigSerializer(many=True)


class HookTypeSerializer(serializers.Serializer):
    """A registered hook: what the admin (or this API) can configure."""

    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=registry.KINDS)
    description = serializers.CharField(help_text="The first line of the hook's docstring.")
    params_schema = serializers.DictField(help_text="JSON Schema of the hook's params.")


class TokenCredentialsSerializer(AuthTokenSerializer):
    """DRF's credentials check, refusing a username no database can store (it names no user)."""

    def validate_username(self, value):
        problem = models.unstorable(value, "username")
        if problem:
            raise serializers.ValidationError(problem)
        return value


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"})


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
