"""Appeals in the API: a submitter appeals the rejection of their item; a reviewer other than the one
who decided it upholds or reverses it; reviewers list the appeals."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from stash import processing
from stash.api.appeal_serializers import (
    AppealDecisionSerializer,
    AppealRequestSerializer,
    AppealReviewSerializer,
    AppealSerializer,
)
from stash.api.exceptions import Conflict
from stash.api.fields import StashSlugField
from stash.api.pagination import ContentCursorPagination
from stash.api.permissions import HasPerm
from stash.api.schema import errors
from stash.api.serializers import QueryParamsSerializer
from stash.models import Appeal, Content


class AppealParamsSerializer(QueryParamsSerializer):
    """The filters of the appeals list (one given blank is refused)."""

    status = serializers.ChoiceField(choices=Appeal.Status.choices, required=False)
    stash = StashSlugField(required=False)


class CanSeeAppeals(HasPerm):
    """Reading appeals needs ``stash.view_content``, as reading every item does."""

    perm = "stash.view_content"
    message = "Reading appeals needs the permission to view content."


class ContentAppealView(APIView):
    """``POST contents/<id>/appeal/``: appeal the rejection of an item."""

    permission_classes = [AllowAny]  # who may appeal is the item's rule, checked below

    @extend_schema(
        summary="Appeal the rejection of an item",
        description="By the item's submitter; for an item submitted anonymously, by the browser session that "
        "submitted it. Within the stash's `appeal_days` of the decision; each decision (each revision of the "
        "item) can be appealed once: a second appeal answers 409. A 400 names `statement` (empty or too long) or "
        "says in `non_field_errors` why the item cannot be appealed (not rejected, a stash that takes no appeals, "
        "or too late: then `deadline` says when the time to appeal ended). A reviewer other than the one who made the "
        "decision decides it; the outcome shows in the item's `appeal`.",
        request=AppealRequestSerializer,
        responses={201: AppealSerializer, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, pk):
        content = Content.objects.select_related("stash").filter(pk=pk).first()
        followed = request.session.get(processing.SUBMITTED_SESSION_KEY, []) if hasattr(request, "session") else []
        if content is None or not processing.may_appeal(request.user, content, followed):
            self._refuse(request, content)
        if not request.user.is_authenticated:
            # The session alone vouches for this browser: it must be a request of this site's pages.
            SessionAuthentication().enforce_csrf(request)
        body = AppealRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            appeal = processing.appeal(content, body.validated_data["statement"], request.user)
        except processing.AppealTooLate as exc:
            return Response(
                {"non_field_errors": [str(exc)], "deadline": exc.deadline.isoformat()},
                status=status.HTTP_400_BAD_REQUEST,
            )
        except processing.AppealRefused as exc:
            raise exceptions.ValidationError({exc.field or "non_field_errors": [str(exc)]}) from exc
        except processing.AppealConflict as exc:
            raise Conflict(str(exc)) from exc
        return Response(AppealSerializer(appeal).data, status=status.HTTP_201_CREATED)

    @staticmethod
    def _refuse(request, content):
        """As reading the item answers: 401 anonymous, 404 for an item one may not see, else 403."""
        if not request.user.is_authenticated:
            raise exceptions.NotAuthenticated()
        if content is None or not processing.visible_contents(request.user).filter(pk=content.pk).exists():
            raise exceptions.NotFound("No such item.")
        raise exceptions.PermissionDenied("Only the person who submitted this item can appeal its decision.")


class AppealViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Appeals, for reviewers: list them, and decide one."""

    serializer_class = AppealReviewSerializer
    permission_classes = [IsAuthenticated, CanSeeAppeals]
    lookup_value_regex = "[0-9]+"
    pagination_class = type("AppealPagination", (ContentCursorPagination,), {"ordering": ("created_at", "id")})

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False) or self.action != "list":
            return processing.appeals_of()
        params = AppealParamsSerializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        return processing.appeals_of(params.validated_data.get("status"), params.validated_data.get("stash"))

    @extend_schema(
        summary="List appeals",
        description="Oldest first, in cursor pages; `?status=open` for those awaiting a decision, `?stash=<slug>` "
        "for one stash's. Each shows the decision appealed next to what the submitter wrote. Needs "
        "`stash.view_content`.",
        parameters=[AppealParamsSerializer],
        responses={200: AppealReviewSerializer(many=True), **errors(400, 401, 403, 404)},
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        summary="Decide an appeal",
        description="`upheld`: the rejection stays. `reversed`: the item is accepted and joins its stash's queue, "
        "the reversal counts against the hook that rejected it (as an overturn), and the stash's sinks get "
        "`on_reversed` (nothing else is sent again). Needs `stash.change_content`, and not to be the person "
        "who made the decision appealed (403). An appeal decided already answers 409.",
        request=AppealDecisionSerializer,
        responses={200: AppealReviewSerializer, **errors(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def decide(self, request, pk=None):
        appeal = get_object_or_404(Appeal, pk=pk)
        body = AppealDecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            processing.decide_appeal(
                appeal.pk, body.validated_data["outcome"], body.validated_data["note"], request.user
            )
        except processing.NotYourAppealToDecide as exc:
            raise exceptions.PermissionDenied(str(exc)) from exc
        except processing.AppealConflict as exc:
            raise Conflict(str(exc)) from exc
        decided = processing.appeals_of().get(pk=appeal.pk)
        return Response(self.get_serializer(decided).data)
