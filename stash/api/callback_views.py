"""``POST /api/callbacks/<token>/``: an outside service's answer for an item an asynchronous hook
sent it (see ``stash.processing.callbacks``). No login: the token finds the callback and the
signature (``X-Stash-Signature``, with the hook's secret) proves the sender."""

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from stash.api.schema import errors
from stash.api.throttling import CallbackThrottle
from stash.processing import callbacks


class CallbackAnswerSerializer(serializers.Serializer):
    """The service's answer on one item."""

    outcome = serializers.ChoiceField(choices=callbacks.OUTCOMES, help_text="keep, drop or hold the item.")
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=callbacks.REASON_MAX,
        help_text="Why (required to drop or hold): shown as the item's reason.",
    )


class CallbackAcceptedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    outcome = serializers.CharField()


class _RawBody:
    """Reads no body: the view checks the signature over the raw bytes before parsing them."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):  # pragma: no cover - never called
        return {}


class CallbackView(APIView):
    """Take an outside moderation service's answer for one item."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [CallbackThrottle]
    parser_classes = [_RawBody]

    @extend_schema(
        summary="Answer for an item an asynchronous hook sent (outside services)",
        description=(
            "The callback_url an asynchronous hook (moderation_api with mode: async) sent with each item. "
            "Sign the raw body as the hook signs its request: `X-Stash-Signature: sha256=<hex HMAC-SHA256 "
            "of the body with the hook's secret>`. The first answer counts; the item's run goes on at "
            "the next hook. 404: no such token; 401: unsigned or forged (nothing changes); 409: already "
            "answered, too late (the hook's timeout passed), or the item has changed since; 400: a body "
            'that is not {"outcome", "reason"} (the field and why).'
        ),
        request=CallbackAnswerSerializer,
        responses={
            202: OpenApiResponse(CallbackAcceptedSerializer, description="Taken: the item's run goes on."),
            **errors(400, 401, 404, 409, 429),
        },
        examples=[OpenApiExample("Drop", value={"outcome": "drop", "reason": "toxic (0.97)"}, request_only=True)],
        auth=[],
    )
    def post(self, request, token):
        if len(token) > 200:
            return Response({"detail": "No callback has this token."}, status=status.HTTP_404_NOT_FOUND)
        try:
            taken = callbacks.answer(token, request.body, request.headers.get("X-Stash-Signature"))
        except callbacks.CallbackRefused as refused:
            if refused.status == 400:
                return Response({refused.field: [refused.message]}, status=status.HTTP_400_BAD_REQUEST)
            return Response({"detail": refused.message}, status=refused.status)
        return Response({"detail": "Taken.", "outcome": taken.outcome}, status=status.HTTP_202_ACCEPTED)
