"""The failure store in the API: groups of failures, one group, and its re-drive."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from stash import processing
from stash.api import permissions
from stash.api.failure_serializers import (
    FailureFiltersSerializer,
    FailureGroupDetailSerializer,
    FailureGroupSerializer,
    RedriveSerializer,
)
from stash.api.schema import errors
from stash.api.serializers import ReprocessParamsSerializer


def _group_or_404(key):
    group = processing.failures.group(key)
    if group is None:
        raise Http404(f"No group of failures {key}.")
    return group


class FailureListView(APIView):
    permission_classes = [IsAuthenticated, permissions.CanReadFailures]

    @extend_schema(
        summary="The failure store",
        description="Hook errors, hook timeouts and items given up on, grouped by stash, hook config, error type "
        "and pipeline version, the latest seen first (200 groups at most), each with its counts, when it was "
        "first and last seen and its latest failure. Filter with `stash`, `since` and `until`. Needs "
        "`stash.view_content`.",
        parameters=[FailureFiltersSerializer],
        responses={200: FailureGroupSerializer(many=True), **errors(400, 401, 403)},
    )
    def get(self, request):
        params = FailureFiltersSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        groups = processing.failures.groups(**params.validated_data)
        return Response(FailureGroupSerializer(groups, many=True).data)


class FailureGroupView(APIView):
    permission_classes = [IsAuthenticated, permissions.CanReadFailures]

    @extend_schema(
        summary="A group of failures",
        description="All its failures' counts, the trail of its latest and, once re-driven, what became of its "
        "items. Needs `stash.view_content`.",
        responses={200: FailureGroupDetailSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, key):
        group = _group_or_404(key)
        run = group.example_run
        context = {"trail": run.trail if run else None, "outcome": processing.redriving.outcome(key)}
        return Response(FailureGroupDetailSerializer(group, context=context).data)


class RedriveView(APIView):
    permission_classes = [IsAuthenticated, permissions.CanReprocess]

    @extend_schema(
        summary="Re-drive a group of failures",
        description="Judge the group's items again on their stash's current pipeline (after a fix). Items whose "
        "status a person's decision gave are left out unless `include_reviewed=true`. Answers what was sent; "
        "`GET failures/<key>/` then says what became of them (`outcome`). Needs `stash.change_content`.",
        parameters=[ReprocessParamsSerializer],
        request=None,
        responses={202: RedriveSerializer, **errors(400, 401, 403, 404)},
    )
    def post(self, request, key):
        _group_or_404(key)
        params = ReprocessParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        done = processing.redriving.redrive(key, include_reviewed=params.validated_data["include_reviewed"])
        body = {
            "sent": done.sent,
            "left_out": done.left_out,
            "decided_by": done.people.who() if done.people else "",
            "outcome": processing.redriving.outcome(key),
        }
        return Response(RedriveSerializer(body).data, status=status.HTTP_202_ACCEPTED)
