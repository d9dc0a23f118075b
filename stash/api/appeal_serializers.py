"""What the API reads and shows of appeals: a submitter's appeal, its outcome, and a reviewer's decision."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from stash import processing
from stash.api.fields import StashSlugField
from stash.models import APPEAL_TEXT_MAX, Appeal


class AppealRequestSerializer(serializers.Serializer):
    """An appeal: the submitter's own words on why the decision is wrong."""

    statement = serializers.CharField(
        max_length=APPEAL_TEXT_MAX,
        help_text=f"Why the decision is wrong, in the submitter's words (1 to {APPEAL_TEXT_MAX} characters).",
        error_messages={"blank": "Say why you think the decision is wrong."},
    )


class AppealSerializer(serializers.ModelSerializer):
    """An item's appeal as its submitter sees it: open, or upheld or reversed with the reviewer's note."""

    statement = serializers.CharField(source="text", read_only=True, help_text="What the submitter wrote.")

    class Meta:
        model = Appeal
        fields = ["id", "status", "statement", "note", "created_at", "decided_at"]
        read_only_fields = fields


class AppealReviewSerializer(serializers.ModelSerializer):
    """An appeal as a reviewer sees it: the decision appealed and the submitter's words side by side."""

    content = serializers.UUIDField(source="content_id", read_only=True)
    stash = StashSlugField(source="content.stash", read_only=True)
    statement = serializers.CharField(source="text", read_only=True, help_text="What the submitter wrote.")
    decision = serializers.SerializerMethodField(help_text="The decision appealed: who made it, and why.")
    may_decide = serializers.SerializerMethodField(help_text="Whether you may decide this appeal.")
    decided_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Appeal
        fields = [
            "id",
            "content",
            "stash",
            "revision",
            "status",
            "statement",
            "decision",
            "created_at",
            "note",
            "decided_by",
            "decided_at",
            "may_decide",
        ]
        read_only_fields = fields

    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "hook": {"type": "string", "nullable": True},
                "reviewer": {"type": "string", "nullable": True},
                "reason": {"type": "string"},
                "statement_of_reasons": {"type": "string"},
            },
        }
    )
    def get_decision(self, appeal):
        content, statement = appeal.content, appeal.statement
        hook = content.decided_by.title if content.decided_by_id and content.decided_by else None
        reviewer = appeal.original_reviewer
        return {
            "hook": hook,
            "reviewer": reviewer.get_username() if reviewer is not None else None,
            "reason": content.reason,
            "statement_of_reasons": statement.text,
        }

    def get_may_decide(self, appeal) -> bool:
        request = self.context.get("request")
        return (
            request is not None and appeal.status == Appeal.Status.OPEN and processing.may_decide(request.user, appeal)
        )


class AppealDecisionSerializer(serializers.Serializer):
    """A reviewer's decision on an appeal."""

    outcome = serializers.ChoiceField(
        choices=list(processing.APPEAL_OUTCOMES),
        help_text="upheld: the decision stays; reversed: the item is accepted.",
    )
    note = serializers.CharField(
        max_length=2000, required=False, allow_blank=True, default="", help_text="What the submitter reads."
    )
