"""Serializers of the review queue: a decision on an item, a claim, and the queue of a stash."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from stash.api.fields import StashSlugField, StringField
from stash.api.serializers import ContentDetailSerializer, QueryParamsSerializer

#: The decisions a reviewer makes through the API (judging again is ``contents/<id>/reprocess/``).
API_DECISIONS = ("approve", "reject", "overturn")


class ReviewSerializer(serializers.Serializer):
    """A reviewer's decision on one item."""

    decision = serializers.ChoiceField(
        choices=API_DECISIONS,
        help_text="approve or reject a held item; overturn the hooks' verdict on a held, rejected or accepted one.",
    )
    note = StringField(required=False, allow_blank=True, max_length=1000, default="", help_text="Why (optional).")


class ReviewOutcomeSerializer(serializers.Serializer):
    """What a decision did: the item as it is now; ``first_approval`` when the item needs a second
    reviewer's approval (four eyes) and is still held."""

    decision = serializers.CharField()
    first_approval = serializers.BooleanField()
    content = ContentDetailSerializer()


class ClaimSerializer(serializers.Serializer):
    """Who holds an item and until when (``claimed_by`` null: nobody)."""

    id = serializers.UUIDField()
    claimed_by = serializers.CharField(allow_null=True, help_text="The username of the reviewer holding it.")
    claimed_until = serializers.DateTimeField(allow_null=True)


class ReleaseSerializer(serializers.Serializer):
    released = serializers.BooleanField(help_text="False when you held no claim on the item.")


class ReviewQueueParamsSerializer(QueryParamsSerializer):
    """Query parameters of a stash's review queue."""

    stash = StashSlugField(help_text="The stash's slug.")
    after = serializers.UUIDField(required=False, help_text="The last item id read; the page starts after it.")
    limit = serializers.IntegerField(min_value=1, max_value=500, default=50, help_text="Items per page.")


class ReviewQueueItemSerializer(serializers.Serializer):
    """One held item in the queue, with who holds it and its deadline."""

    id = serializers.UUIDField(source="item.pk")
    payload = serializers.JSONField(source="item.payload")
    reason = serializers.CharField(source="item.reason")
    created_at = serializers.DateTimeField(source="item.created_at")
    held_since = serializers.DateTimeField(source="item.processed_at", allow_null=True)
    priority = serializers.FloatField(source="item.priority", allow_null=True)
    claimed_by = serializers.SerializerMethodField(help_text="Who holds it now (null: free).")
    claimed_until = serializers.SerializerMethodField()
    overdue = serializers.BooleanField(help_text="Held longer than the stash's review_hours.")
    approvals = serializers.ListField(
        source="approvers",
        child=serializers.CharField(),
        help_text="Reviewers who gave it a first approval (four eyes).",
    )

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_claimed_by(self, row):
        return row.holder.get_username() if row.holder is not None else None

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_claimed_until(self, row):
        if row.holder is None:
            return None
        return serializers.DateTimeField().to_representation(row.item.claimed_until)


class ReviewQueuePageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Held items in the stash.")
    overdue = serializers.IntegerField(help_text="Of those, how many are overdue.")
    results = ReviewQueueItemSerializer(many=True)
    next_after = serializers.UUIDField(allow_null=True, help_text="Pass as `after` for the next page; null at the end.")
