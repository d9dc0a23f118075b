"""API views: viewsets composed from mixins; items are saved, judged and read through ``stash.processing``."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils.http import urlencode
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.reverse import reverse

from stash import processing
from stash.api import permissions
from stash.api.exceptions import Conflict
from stash.api.filters import ContentFilter
from stash.api.pagination import ContentCursorPagination
from stash.api.parsers import JSONParser
from stash.api.pipeline_serializers import ExampleSerializer
from stash.api.schema import BROKEN, SLOW, errors
from stash.api.serializers import (
    BulkResultSerializer,
    BulkSubmitSerializer,
    ContentDetailSerializer,
    ContentEditSerializer,
    ContentSerializer,
    HookConfigSerializer,
    HookOrderSerializer,
    HookTypeSerializer,
    QueueItemSerializer,
    QueuePageSerializer,
    QueueParamsSerializer,
    ReorderSerializer,
    ReprocessParamsSerializer,
    SimulateParamsSerializer,
    SimulateSerializer,
    SimulationSerializer,
    StashSerializer,
    SubmitSerializer,
    TokenCredentialsSerializer,
    TokenRequestSerializer,
    TokenSerializer,
    represent,
)
from stash.api.throttling import AnonymousSubmitThrottle, TokenThrottle
from stash.core import registry
from stash.models import Content, HookConfig, Stash

# "audit" is the demo stash (`manage.py stash_demo`).
SLUG = OpenApiParameter(
    "slug",
    str,
    OpenApiParameter.PATH,
    description="The stash's slug.",
    examples=[OpenApiExample("The demo stash", value="audit")],
)
STASH_SLUG = OpenApiParameter(
    "stash_slug",
    str,
    OpenApiParameter.PATH,
    description="The stash's slug.",
    examples=[OpenApiExample("The demo stash", value="audit")],
)
HOOK_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="The hook config's id.")
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="Makes a retry safe: the same key with the same stash and payload answers the item it made "
    "first (200); with another stash or payload, 409. Up to 200 characters; authenticated callers only.",
)


class StashScoped:
    """A view under ``stashes/<stash_slug>/``: ``self.stash``, fetched after authentication and
    permissions, so that who may not use the view learns nothing of stashes (a 404 comes only then)."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.stash = get_object_or_404(Stash, slug=kwargs["stash_slug"])

    def of_stash(self, queryset):
        """``queryset`` narrowed to the rows of the URL's stash (none while the schema is generated:
        there is no URL then)."""
        if getattr(self, "swagger_fake_view", False):
            return queryset.none()
        return queryset.filter(stash__slug=self.kwargs["stash_slug"])


class SerializerPerAction:
    """``get_serializer()`` builds ``serializer_classes[action]`` for an action that reads or writes
    something other than ``serializer_class``."""

    serializer_classes = {}

    def get_serializer_class(self):
        return self.serializer_classes.get(self.action, self.serializer_class)


@extend_schema_view(
    list=extend_schema(
        summary="List items",
        description="Your items, or every item with `stash.view_content`; newest first, in cursor pages.",
        responses={200: ContentSerializer, **errors(400, 401, 404)},
    ),
    retrieve=extend_schema(
        summary="Read an item and the trail of its latest run",
        responses={200: ContentDetailSerializer, **errors(401, 404)},
    ),
)
class ContentViewSet(SerializerPerAction, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Items: submit, list, read, edit the payload, judge again."""

    serializer_class = ContentSerializer
    serializer_classes = {
        "create": SubmitSerializer,
        "partial_update": ContentEditSerializer,
        "bulk": BulkSubmitSerializer,
        "retrieve": ContentDetailSerializer,
        "reprocess": ContentDetailSerializer,
    }
    pagination_class = ContentCursorPagination
    filter_backends = [DjangoFilterBackend]
    filterset_class = ContentFilter
    lookup_value_regex = "[0-9a-fA-F-]{32,36}"
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_queryset(self):
        return processing.visible_contents(self.request.user).select_related(
            "stash", "decided_by", "submitted_by", "reviewed_by"
        )

    def get_permissions(self):
        if self.action == "create":
            return [permissions.CanSubmit()]
        if self.action == "partial_update":
            return [IsAuthenticated(), permissions.CanEditContent()]
        return super().get_permissions()

    def get_throttles(self):
        if self.action == "create":
            return [AnonymousSubmitThrottle()]
        return super().get_throttles()

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if self.action == "create":
            context["idempotency_key"] = self.request.headers.get("Idempotency-Key", "")
        return context

    def filter_queryset(self, queryset):
        # The list's filters narrow the list only: an item's own URL answers whatever the query says.
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    def _detail(self, content, status_code=status.HTTP_200_OK, serializer_class=ContentDetailSerializer, headers=None):
        return Response(represent(serializer_class, content), status=status_code, headers=headers)

    @extend_schema(
        summary="Submit an item",
        description="Needs `stash.add_content`, unless the stash takes anonymous submissions (then throttled). "
        "The item is judged by the stash's hooks after the request; poll it or read the queue.",
        parameters=[IDEMPOTENCY_KEY],
        request=ContentSerializer,
        responses={201: ContentSerializer, 200: ContentSerializer, **errors(400, 401, 403, 409, 413, 415, 429)},
    )
    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        stash = serializer.validated_data["stash"]
        self.check_object_permissions(request, stash)
        content, created = processing.submit(
            stash,
            serializer.validated_data["payload"],
            request.user,
            Content.Source.API,
            idempotency_key=serializer.context["idempotency_key"],
        )
        location = reverse("api:content-detail", args=[content.pk], request=request)
        return self._detail(
            content,
            status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            ContentSerializer,
            headers={"Location": location},
        )

    @extend_schema(
        summary="Change an item's payload",
        description="A changed payload is a new revision: the item is pending again and the hooks run again. "
        "Needs to be the item's submitter, or `stash.change_content`.",
        request=ContentEditSerializer,
        responses={200: ContentDetailSerializer, **errors(400, 401, 403, 404, 413, 415)},
    )
    def partial_update(self, request, *args, **kwargs):
        content = self.get_object()
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return self._detail(processing.edit_payload(content, serializer.validated_data["payload"]))

    @extend_schema(
        summary="Submit up to 1,000 items at once",
        description="All or none, in one transaction; the items are handed to the workers together, in chunks. "
        "Needs `stash.add_content`.",
        request=BulkSubmitSerializer,
        responses={201: BulkResultSerializer, **errors(400, 401, 403, 413, 415)},
    )
    @action(detail=False, methods=["post"], permission_classes=[IsAuthenticated, permissions.CanBulkSubmit])
    def bulk(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        contents = processing.submit_many(
            serializer.validated_data["stash"], serializer.validated_data["items"], request.user, Content.Source.API
        )
        return Response(
            {"count": len(contents), "ids": [content.pk for content in contents]}, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        summary="Judge an item again",
        description="With the stash's current hooks. An item whose status a person's decision gave (approved, "
        "rejected or overturned in review) answers 409 and is left as it is, unless "
        "`include_reviewed=true`: then the decision is replaced, kept in the item's history, and "
        "`reviewed_by` is null. Needs `stash.change_content`.",
        parameters=[ReprocessParamsSerializer],
        request=None,
        responses={202: ContentDetailSerializer, **errors(400, 401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated, permissions.CanReprocess])
    def reprocess(self, request, pk=None):
        content = self.get_object()
        params = ReprocessParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        items = Content.objects.filter(pk=content.pk)
        if not processing.reprocess(items, include_reviewed=params.validated_data["include_reviewed"]):
            people = processing.decided_by_people(items)
            if people:
                raise Conflict(
                    f"Not judged again: this item's status was decided in review (by {people.who()}). "
                    "Send ?include_reviewed=true to replace that decision (the item's history keeps "
                    "it); nothing was changed.",
                    code="reviewed",
                )
        content.refresh_from_db()
        return self._detail(content, status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="Make a golden example of an item",
        description="A new example of the item's stash: its payload as submitted, expecting the verdict the item "
        "has (with the reason code and the hook of its latest run, unless a reviewer decided "
        "otherwise). 400 if the item has no verdict yet. Needs `stash.add_example`.",
        request=None,
        responses={201: ExampleSerializer, **errors(400, 401, 403, 404)},
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated, permissions.CanMakeExample])
    def example(self, request, pk=None):
        content = self.get_object()
        try:
            example = processing.example_from(content, request.user)
        except ValueError as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from exc
        return Response(represent(ExampleSerializer, example), status=status.HTTP_201_CREATED)


@extend_schema_view(
    list=extend_schema(
        summary="List stashes",
        description="The stashes you may submit to (all, with `stash.view_stash`).",
        responses={200: StashSerializer(many=True)},
    ),
    retrieve=extend_schema(summary="Read a stash", parameters=[SLUG], responses={200: StashSerializer, **errors(404)}),
)
class StashViewSet(SerializerPerAction, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Stashes; their accepted queue; trying a payload against their hooks."""

    serializer_class = StashSerializer
    serializer_classes = {"queue": QueueItemSerializer, "simulate": SimulateSerializer}
    permission_classes = [AllowAny]
    pagination_class = None
    lookup_field = "slug"
    lookup_value_regex = "[-a-zA-Z0-9_]+"

    def get_queryset(self):
        user = self.request.user
        if self.action in ("queue", "simulate") or user.has_perm("stash.view_stash"):
            return Stash.objects.all()
        return processing.submittable_stashes(user)

    @extend_schema(
        summary="Read a stash's accepted queue",
        description="Accepted items in acceptance order. Pass the last `seq` you read as `after` (or follow "
        "`next`): no item is missed or repeated, however many are accepted meanwhile. "
        "Needs `stash.view_content`.",
        parameters=[SLUG, QueueParamsSerializer],
        responses={200: QueuePageSerializer, **errors(400, 401, 403, 404)},
    )
    @action(detail=True, methods=["get"], permission_classes=[IsAuthenticated, permissions.CanReadQueue])
    def queue(self, request, slug=None):
        stash = self.get_object()
        params = QueueParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        after, limit = params.validated_data["after"], params.validated_data["limit"]
        items = processing.queue_page(stash, after=after, limit=limit)
        next_after = items[-1].queue_seq if items else after
        next_url = reverse("api:stash-queue", args=[stash.slug], request=request)
        return Response(
            {
                "results": self.get_serializer(items, many=True).data,
                "next_after": next_after,
                "next": f"{next_url}?{urlencode({'after': next_after, 'limit': limit})}",
            }
        )

    @extend_schema(
        summary="Try a payload against a stash's hooks",
        parameters=[SLUG, SimulateParamsSerializer],
        description="Runs the current hooks over `payload`, or over the payload the item `content_id` was "
        "submitted with, before any transform (of this stash, and one you may read), and answers the "
        "verdict and the trail; nothing is saved "
        "or counted. With `verbose` (in the body, or `?verbose=1`) every enabled hook runs, even after "
        "the one that decided, and each transform's entry carries the payload it made. "
        "Needs `stash.view_hookconfig`.",
        request=SimulateSerializer,
        responses={200: SimulationSerializer, **errors(400, 401, 403, 404, 413, 415, 503)},
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated, permissions.CanSimulate])
    def simulate(self, request, slug=None):
        stash = self.get_object()
        params = SimulateParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        content = None
        if processing.CONTENT_FIELD in data:
            content = processing.simulation_item(
                stash, data[processing.CONTENT_FIELD], processing.visible_contents(request.user)
            )
        result = processing.simulate(
            stash, data.get("payload"), content=content, verbose=data["verbose"] or params.validated_data["verbose"]
        )
        return Response(result.as_dict())


#: What a change of one hook config answers (the golden examples may refuse it).
HOOK_CHANGED = {200: HookConfigSerializer, **errors(400, 401, 403, 404, 415), **BROKEN, **SLOW}


@extend_schema_view(
    list=extend_schema(
        summary="List a stash's hooks, in order",
        parameters=[STASH_SLUG],
        responses={200: HookConfigSerializer(many=True), **errors(401, 403, 404)},
    ),
    create=extend_schema(
        summary="Add a hook to a stash (at the end)",
        parameters=[STASH_SLUG],
        responses={201: HookConfigSerializer, **errors(400, 401, 403, 404, 415), **BROKEN, **SLOW},
    ),
    retrieve=extend_schema(
        summary="Read one hook config",
        parameters=[STASH_SLUG, HOOK_ID],
        responses={200: HookConfigSerializer, **errors(401, 403, 404)},
    ),
    update=extend_schema(summary="Replace a hook config", parameters=[STASH_SLUG, HOOK_ID], responses=HOOK_CHANGED),
    partial_update=extend_schema(
        summary="Change a hook config", parameters=[STASH_SLUG, HOOK_ID], responses=HOOK_CHANGED
    ),
    destroy=extend_schema(
        summary="Remove a hook from a stash",
        parameters=[STASH_SLUG, HOOK_ID],
        responses={204: None, **errors(401, 403, 404), **BROKEN, **SLOW},
    ),
)
class HookConfigViewSet(
    StashScoped,
    SerializerPerAction,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """A stash's configured hooks. Params, hook name and condition are checked as in the admin, and
    each change runs the stash's golden examples before it is kept, as the admin's do: 409 when
    it breaks one and the stash refuses that (``processing.run_checked``)."""

    serializer_class = HookConfigSerializer
    serializer_classes = {"reorder": ReorderSerializer}
    permission_classes = [IsAuthenticated, permissions.HookConfigPermissions]
    pagination_class = None
    lookup_value_regex = "[0-9]+"

    def get_queryset(self):
        return self.of_stash(HookConfig.objects.in_order())

    def perform_create(self, serializer):
        def create():
            serializer.instance = None  # a draft's, rolled back (``run_checked``): create it anew
            serializer.save(stash=self.stash)

        processing.run_checked(create)

    def perform_update(self, serializer):
        def update():
            serializer.instance = self.get_object()  # as it is now: what another change kept meanwhile stays
            serializer.save()

        processing.run_checked(update)

    def perform_destroy(self, instance):
        processing.run_checked(lambda: processing.delete_hooks(HookConfig.objects.filter(pk=instance.pk)))

    @extend_schema(
        summary="Put a stash's hooks in a new order",
        description="Give every hook id once, in the new order, and the stash's `config_version` you read them "
        "at: if the hooks changed since, nothing moves and the answer is 409; so too, with the "
        "broken `examples`, when the new order breaks golden examples of a stash that refuses "
        "that. Needs `stash.change_hookconfig`.",
        parameters=[STASH_SLUG],
        request=ReorderSerializer,
        responses={200: HookOrderSerializer, **errors(400, 401, 403, 404, 409, 415), **SLOW},
    )
    @action(detail=False, methods=["post"], permission_classes=[IsAuthenticated, permissions.CanReorderHooks])
    def reorder(self, request, stash_slug=None):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            processing.run_checked(
                lambda: processing.reorder_hooks(
                    self.stash, serializer.validated_data["order"], serializer.validated_data["config_version"]
                )
            )
        except DjangoValidationError as exc:
            raise ValidationError({"order": exc.messages}) from exc
        hooks = HookConfigSerializer(self.get_queryset(), many=True, context=self.get_serializer_context()).data
        return Response({"config_version": self.stash.config_version, "hooks": hooks})


@extend_schema_view(
    list=extend_schema(
        summary="List the registered hooks",
        description="What a stash's hooks can be: name, kind, description and the JSON Schema of their params.",
        responses={200: HookTypeSerializer(many=True), **errors(401)},
    )
)
class HookTypeViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """The hook registry: the only names a hook config can use."""

    serializer_class = HookTypeSerializer
    pagination_class = None

    def get_queryset(self):
        return registry.all()


class TokenView(ObtainAuthToken):
    """Trade a username and password for the user's API token."""

    authentication_classes = []
    serializer_class = TokenCredentialsSerializer
    throttle_classes = [TokenThrottle]
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Get your API token",
        request=TokenRequestSerializer,
        responses={200: TokenSerializer, **errors(400, 415, 429)},
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
