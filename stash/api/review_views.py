"""The review actions in the API, as the admin's review page has them: decide on an item, claim and
release it, and read a stash's review queue. Every rule is ``processing``'s."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from stash import processing
from stash.api import permissions
from stash.api.exceptions import Conflict
from stash.api.parsers import JSONParser
from stash.api.review_serializers import (
    ClaimSerializer,
    ReleaseSerializer,
    ReviewOutcomeSerializer,
    ReviewQueuePageSerializer,
    ReviewQueueParamsSerializer,
    ReviewSerializer,
)
from stash.api.schema import errors
from stash.api.serializers import ContentDetailSerializer, represent
from stash.models import Content


class _OnItem(APIView):
    """A view of one item (``contents/<id>/...``) that only someone who may review it reaches."""

    permission_classes = [IsAuthenticated, permissions.CanReview]
    parser_classes = [JSONParser]

    def item(self, pk):
        return get_object_or_404(processing.visible_contents(self.request.user).select_related("stash"), pk=pk)


class ReviewView(_OnItem):
    @extend_schema(
        summary="Decide on an item (review)",
        description="As the admin's review page does: `approve` or `reject` a held item, `overturn` the hooks' "
        "verdict on a held, rejected or accepted one. 400 when the decision does not apply to the item's "
        "status; 409 when another reviewer holds the item (a claim: the answer names them and until when), "
        "when it changed meanwhile, when it is waiting for an outside service's answer (no verdict yet), or when "
        "you approved a four-eyes item once already. An item held with "
        "one of its stash's `four_eyes_reasons` needs two different reviewers: the first approval is "
        "recorded (`first_approval`) and the item stays held. Needs `stash.view_content` and "
        "`stash.change_content`.",
        request=ReviewSerializer,
        responses={200: ReviewOutcomeSerializer, **errors(400, 401, 403, 404, 409, 415)},
        examples=[OpenApiExample("Approve", value={"decision": "approve", "note": "fine"}, request_only=True)],
    )
    def post(self, request, pk):
        content = self.item(pk)
        serializer = ReviewSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        decision, note = serializer.validated_data["decision"], serializer.validated_data["note"]
        if content.status == Content.Status.WAITING:
            raise Conflict(processing.WAITING_REFUSAL, code="waiting")
        if decision not in processing.decisions_for(content):
            raise ValidationError(
                {"decision": [f"{decision} does not apply to this item: it is {content.status}. Nothing was changed."]}
            )
        outcome = processing.decide(content.pk, decision, request.user, note, expected=content.status)
        if outcome.refused:
            raise Conflict(outcome.message, code=outcome.refused)
        if outcome.content is None:
            raise Conflict("The item no longer exists. Nothing was changed.", code="gone")
        if not outcome.applied:
            raise Conflict(
                f"The item changed meanwhile: it is {outcome.content.status} now. Nothing was changed.", code="stale"
            )
        body = {
            "decision": decision,
            "first_approval": outcome.first_approval,
            "content": represent(ContentDetailSerializer, outcome.content),
        }
        return Response(body)


class ClaimView(_OnItem):
    @extend_schema(
        summary="Claim a held item for review",
        description=f"Others skip it in the queue and may not decide it for `STASH_REVIEW_CLAIM_MINUTES` "
        f"(now {processing.claim_minutes()}), until you decide it or release it. Claiming "
        "an item you hold already extends the claim. 409 when another reviewer holds it (the answer names "
        "them and until when); 400 when the item is not held. Needs `stash.view_content` and "
        "`stash.change_content`.",
        request=None,
        responses={200: ClaimSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, pk):
        content = self.item(pk)
        if content.status != Content.Status.HELD:
            raise ValidationError({"non_field_errors": [f"Only held items are claimed: this one is {content.status}."]})
        result = processing.claim(content.pk, request.user)
        if not result.taken:
            current = result.content
            if current is not None and processing.held_by_other(current, request.user):
                raise Conflict(processing.holder_message(current), code="claimed")
            raise Conflict("The item is no longer held. Nothing was changed.", code="stale")
        return Response({"id": content.pk, "claimed_by": request.user.get_username(), "claimed_until": result.until})


class ReleaseView(_OnItem):
    @extend_schema(
        summary="Release your claim on an item",
        description="The item goes back to the queue for other reviewers. `released` is false when you held "
        "no claim on it. Needs `stash.view_content` and `stash.change_content`.",
        request=None,
        responses={200: ReleaseSerializer, **errors(401, 403, 404)},
    )
    def post(self, request, pk):
        content = self.item(pk)
        return Response({"released": processing.release(content.pk, request.user)})


class ReviewQueueView(APIView):
    permission_classes = [IsAuthenticated, permissions.CanReadQueue]

    @extend_schema(
        summary="A stash's review queue",
        description="Its held items in the order reviewers take them: the highest `priority` first (the "
        "stash's `review_priority`; items without one last), then the oldest. Each says who holds it "
        "(`claimed_by`, `claimed_until`; null: free), whether it is `overdue` (held longer than the "
        "stash's `review_hours`) and its first `approvals` (four eyes). A page of `limit` items; pass "
        "`next_after` as `after` for the next. Needs `stash.view_content`.",
        parameters=[ReviewQueueParamsSerializer],
        responses={200: ReviewQueuePageSerializer, **errors(400, 401, 403)},
    )
    def get(self, request):
        params = ReviewQueueParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        stash, limit = params.validated_data["stash"], params.validated_data["limit"]
        held = processing.held_items(stash)
        items = held.select_related("claimed_by")
        after_id = params.validated_data.get("after")
        if after_id is not None:
            after = Content.objects.filter(pk=after_id, stash=stash).first()
            if after is None:
                raise ValidationError({"after": [f"No item {after_id} in the stash {stash.slug}."]})
            items = items.filter(processing.after_in_queue(after))
        page = list(items[: limit + 1])
        more, page = len(page) > limit, page[:limit]
        body = {
            "count": held.count(),
            "overdue": processing.overdue_counts().get(stash.pk, 0),
            "results": processing.queue_rows(page, stash),
            "next_after": page[-1].pk if more else None,
        }
        return Response(ReviewQueuePageSerializer(body).data, status=status.HTTP_200_OK)
