"""API views of a stash's shadows, under ``stashes/<slug>/shadows/``: start one, read each with its agreement
report, stop it, promote it; each a call into ``stash.processing``."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from stash import processing
from stash.api import permissions
from stash.api.pipeline_views import CHANGE_PERMISSIONS, DocumentBodyLimit
from stash.api.schema import SLOW, errors
from stash.api.shadow_serializers import (
    PromotedSerializer,
    PromoteRefusedSerializer,
    ShadowSerializer,
    ShadowStartSerializer,
)
from stash.api.views import STASH_SLUG, StashScoped

SHADOW_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="The shadow's id.")
_FIELDS = ("document", "version", "percent", "count", "minutes")


class ShadowViewSet(DocumentBodyLimit, StashScoped, viewsets.ViewSet):
    """A stash's shadows: a draft or a saved version judged beside the live pipeline on a share of live
    saves, its sinks off, changing no verdict; the agreement report; promoting it."""

    lookup_value_regex = "[0-9]+"
    serializer_class = ShadowSerializer

    def get_permissions(self):
        if self.action in ("create", "stop", "promote"):
            return [IsAuthenticated(), permissions.CanChangePipeline()]
        return [IsAuthenticated(), permissions.CanReadPipeline()]

    def _shadow(self, pk):
        return get_object_or_404(processing.shadows_of(self.stash).select_related("stash"), pk=pk)

    @extend_schema(
        summary="List a stash's shadows, each with its agreement report",
        description="Newest first. Needs `stash.view_hookconfig`.",
        parameters=[STASH_SLUG],
        responses={200: ShadowSerializer(many=True), **errors(401, 403, 404)},
    )
    def list(self, request, stash_slug=None):
        shadows = processing.shadows_of(self.stash).select_related("stash")
        return Response([processing.described_shadow(shadow) for shadow in shadows])

    @extend_schema(
        summary="Read a shadow, its agreement report and the pipeline it runs",
        description="The document has no secret params and no config ids. Needs `stash.view_hookconfig`.",
        parameters=[STASH_SLUG, SHADOW_ID],
        responses={200: ShadowSerializer, **errors(401, 403, 404)},
    )
    def retrieve(self, request, stash_slug=None, pk=None):
        return Response(processing.described_shadow(self._shadow(pk), document=True))

    @extend_schema(
        summary="Start a shadow of a stash",
        description="Runs `document` (a pipeline document: a draft) or the saved `version` beside the live "
        "pipeline on `percent` (1-100) of live saves, chosen per item, until it has judged `count` items or "
        "`minutes` have passed. The shadow's sinks are off; it changes no verdict and no payload. One shadow "
        f"runs per stash at a time: a second is a 409. Needs {CHANGE_PERMISSIONS}.",
        parameters=[STASH_SLUG],
        request=ShadowStartSerializer,
        responses={201: ShadowSerializer, **errors(400, 401, 403, 404, 409, 413, 415)},
    )
    def create(self, request, stash_slug=None):
        if not isinstance(request.data, dict):
            raise exceptions.ValidationError({"non_field_errors": ["Send a JSON object."]})
        refused = {name: ["Unknown field."] for name in sorted(set(request.data) - set(_FIELDS))}
        refused.update({name: ["This field may not be null."] for name in _FIELDS if request.data.get(name, 0) is None})
        if refused:
            raise exceptions.ValidationError(refused)
        shadow = processing.start_shadow(
            self.stash, **{name: request.data.get(name) for name in _FIELDS}, user=request.user
        )
        return Response(processing.described_shadow(shadow), status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Stop a shadow",
        description=f"It judges nothing more; its report stays. A shadow that is not running is a 409. Needs "
        f"{CHANGE_PERMISSIONS}.",
        parameters=[STASH_SLUG, SHADOW_ID],
        request=None,
        responses={200: ShadowSerializer, **errors(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"])
    def stop(self, request, stash_slug=None, pk=None):
        shadow = processing.stop_shadow(self._shadow(pk))
        return Response(processing.described_shadow(shadow))

    @extend_schema(
        summary="Promote a shadow: its pipeline becomes the live one",
        description="As one change: one new version, the stash's golden examples checked first, as for an "
        "import (a stash that blocks a change that breaks one answers 409 with the broken ones, and nothing "
        f"changes). A running shadow ends. Promoting one twice is a 409. Needs {CHANGE_PERMISSIONS}.",
        parameters=[STASH_SLUG, SHADOW_ID],
        request=None,
        responses={
            200: PromotedSerializer,
            **errors(400, 401, 403, 404),
            409: OpenApiResponse(
                PromoteRefusedSerializer,
                description="It breaks golden examples of a stash that refuses such changes (`examples`: the broken "
                "ones; nothing changed), or it was promoted already.",
            ),
            **SLOW,
        },
    )
    @action(detail=True, methods=["post"])
    def promote(self, request, stash_slug=None, pk=None):
        shadow = self._shadow(pk)
        plan = processing.promote_shadow(shadow)
        return Response({"shadow": processing.described_shadow(shadow), "plan": plan.as_dict()})
