"""Serializers of statements of reasons: as an item's submitter reads them, and as staff export them."""

from rest_framework import serializers

from stash.models import Statement


class StatementSerializer(serializers.ModelSerializer):
    """The statement of reasons of a rejected or held item (DSA Art. 17): what was done, why, on
    which ground, whether by automated means, and until when it may be appealed."""

    decided_at = serializers.DateTimeField(read_only=True)

    class Meta:
        model = Statement
        fields = [
            "text",
            "restriction",
            "facts",
            "automated_detection",
            "automated_decision",
            "ground",
            "ground_reference",
            "category",
            "decided_at",
            "appeal_until",
        ]
        read_only_fields = fields


class StatementExportSerializer(serializers.ModelSerializer):
    """A statement as staff export it: the submitter's fields, and which item, decision and reviewer."""

    content = serializers.UUIDField(source="content_id", read_only=True)
    reviewer = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = Statement
        fields = [
            "id",
            "content",
            "revision",
            "kind",
            *StatementSerializer.Meta.fields,
            "reason_code",
            "ground_url",
            "reviewer",
            "ended_at",
        ]
        read_only_fields = fields
