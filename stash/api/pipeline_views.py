"""API views of pipelines as code, under ``stashes/<slug>/``: the pipeline document, its versions
and the stash's golden examples; each a call into ``stash.processing``."""

from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from stash import processing
from stash.api import permissions
from stash.api.exceptions import RequestTooLarge
from stash.api.pagination import VersionCursorPagination
from stash.api.pipeline_serializers import (
    ExampleRunSerializer,
    ExampleSerializer,
    ImportParamsSerializer,
    ImportPlanSerializer,
    PipelineDocumentSerializer,
    VersionDetailSerializer,
    VersionDiffParamsSerializer,
    VersionDiffSerializer,
    VersionSerializer,
)
from stash.api.schema import BROKEN, SLOW, errors
from stash.api.views import STASH_SLUG, SerializerPerAction, StashScoped
from stash.models import Example, PipelineVersion
from stash.processing import limits

VERSION_NUMBER = OpenApiParameter("number", int, OpenApiParameter.PATH, description="The version's number.")
EXAMPLE_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="The example's id.")

CHANGE_PERMISSIONS = (
    "`stash.change_stash`, `stash.add_hookconfig`, `stash.change_hookconfig` and `stash.delete_hookconfig`"
)


class DocumentBodyLimit:
    """A view whose ``document_methods`` take a pipeline document: a body over the documents' limit is
    refused by its length, before anything parses it (the permission checks read the body)."""

    document_methods = ("PUT", "POST")

    def initial(self, request, *args, **kwargs):
        if request.method in self.document_methods:
            try:
                limits.check_document_bytes(int(request.headers.get("content-length") or 0))
            except ValueError:
                pass  # no length: Django reads no body
            except ValidationError as exc:
                raise RequestTooLarge(" ".join(exc.messages)) from exc
        super().initial(request, *args, **kwargs)


class PipelineView(DocumentBodyLimit, StashScoped, GenericAPIView):
    """A stash's pipeline as one document: read it, or make the stash what one says."""

    serializer_class = PipelineDocumentSerializer
    document_methods = ("PUT",)

    def get_permissions(self):
        if self.request.method == "PUT":
            return [IsAuthenticated(), permissions.CanImportDocument()]
        return [IsAuthenticated(), permissions.CanReadPipeline()]

    def get_object(self):
        return self.stash  # what OPTIONS checks the PUT permission on

    @extend_schema(
        summary="Read a stash's pipeline document",
        description="Its settings, its hooks in order and its golden examples, as `manage.py stash_pipeline export` "
        "writes them: no config ids, no secret params. Needs `stash.view_hookconfig`.",
        parameters=[STASH_SLUG],
        responses={200: PipelineDocumentSerializer, **errors(401, 403, 404)},
    )
    def get(self, request, stash_slug=None):
        return Response(processing.export_document(self.stash))

    @extend_schema(
        summary="Make a stash's pipeline what a document says",
        description="Checked as the admin checks a save (a 400 names each faulty hook by its index, and the field), "
        "then the stash's golden examples (or the document's own, which replace them) run through the "
        "new hooks, then the change is made all or nothing, as one new version. Hooks are matched by "
        "hook name and label: a matched hook keeps its id, counters and secret params. With "
        "`dry_run`, only says what would change. A stash whose examples_policy is block refuses a change "
        "that breaks an example (409); one that warns makes it, and the answer shows the failures. "
        f"Needs {CHANGE_PERMISSIONS}; a document with `examples` also `stash.add_example` and "
        "`stash.delete_example`. Creating a stash is `manage.py stash_pipeline import`'s.",
        parameters=[STASH_SLUG, ImportParamsSerializer],
        request=PipelineDocumentSerializer,
        responses={200: ImportPlanSerializer, **errors(400, 401, 403, 404, 413, 415), **BROKEN, **SLOW},
    )
    def put(self, request, stash_slug=None):
        params = ImportParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        plan = processing.import_document(self.stash, request.data, dry_run=params.validated_data["dry_run"])
        return Response(plan.as_dict())


@extend_schema_view(
    list=extend_schema(
        summary="List a stash's pipeline versions",
        description="Every change of the stash's settings or hooks, newest first, in cursor pages. "
        "Needs `stash.view_hookconfig`.",
        parameters=[STASH_SLUG],
        responses={200: VersionSerializer, **errors(400, 401, 403, 404)},
    ),
    retrieve=extend_schema(
        summary="Read a pipeline version, with its document",
        description="The document has no secret params. Needs `stash.view_hookconfig`.",
        parameters=[STASH_SLUG, VERSION_NUMBER],
        responses={200: VersionDetailSerializer, **errors(401, 403, 404)},
    ),
)
class VersionViewSet(
    StashScoped, SerializerPerAction, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The versions of a stash's pipeline: one per change, compared and restored."""

    serializer_class = VersionSerializer
    serializer_classes = {"retrieve": VersionDetailSerializer}
    pagination_class = VersionCursorPagination
    lookup_field = "number"
    lookup_value_regex = "[0-9]+"

    def get_permissions(self):
        if self.action == "restore":
            return [IsAuthenticated(), permissions.CanChangePipeline()]
        return [IsAuthenticated(), permissions.CanReadPipeline()]

    def get_queryset(self):
        return self.of_stash(PipelineVersion.objects.select_related("created_by"))

    @extend_schema(
        summary="Compare two pipeline versions",
        description="What changed from version `from` to version `to` (either may be the later), in phrases and as "
        "a unified diff of their documents. Needs `stash.view_hookconfig`.",
        parameters=[STASH_SLUG, VersionDiffParamsSerializer],
        responses={200: VersionDiffSerializer, **errors(400, 401, 403, 404)},
    )
    @action(detail=False, methods=["get"])
    def diff(self, request, stash_slug=None):
        params = VersionDiffParamsSerializer(data=request.query_params, context={"stash": self.stash})
        params.is_valid(raise_exception=True)
        diff = processing.compare_versions(self.stash, params.validated_data["from"], params.validated_data["to"])
        return Response(diff.as_dict())

    @extend_schema(
        summary="Restore a pipeline version",
        description="Makes the stash's settings and hooks what this version had, as a new version (its golden "
        "examples stay, and run first, as for an import). A hook whose name is no longer registered "
        f"makes it a 400. Needs {CHANGE_PERMISSIONS}.",
        parameters=[STASH_SLUG, VERSION_NUMBER],
        request=None,
        responses={200: ImportPlanSerializer, **errors(400, 401, 403, 404), **BROKEN, **SLOW},
    )
    @action(detail=True, methods=["post"])
    def restore(self, request, stash_slug=None, number=None):
        version = self.get_object()
        return Response(processing.restore(self.stash, version.number).as_dict())


@extend_schema_view(
    list=extend_schema(
        summary="List a stash's golden examples",
        parameters=[STASH_SLUG],
        description="By name. Needs `stash.view_example`.",
        responses={200: ExampleSerializer(many=True), **errors(401, 403, 404)},
    ),
    create=extend_schema(
        summary="Add a golden example to a stash",
        parameters=[STASH_SLUG],
        description="Needs `stash.add_example`.",
        responses={201: ExampleSerializer, **errors(400, 401, 403, 404, 413, 415)},
    ),
    retrieve=extend_schema(
        summary="Read a golden example",
        parameters=[STASH_SLUG, EXAMPLE_ID],
        responses={200: ExampleSerializer, **errors(401, 403, 404)},
    ),
    update=extend_schema(
        summary="Replace a golden example",
        parameters=[STASH_SLUG, EXAMPLE_ID],
        responses={200: ExampleSerializer, **errors(400, 401, 403, 404, 413, 415)},
    ),
    partial_update=extend_schema(
        summary="Change a golden example",
        parameters=[STASH_SLUG, EXAMPLE_ID],
        responses={200: ExampleSerializer, **errors(400, 401, 403, 404, 413, 415)},
    ),
    destroy=extend_schema(
        summary="Remove a golden example",
        parameters=[STASH_SLUG, EXAMPLE_ID],
        responses={204: None, **errors(401, 403, 404)},
    ),
)
class ExampleViewSet(
    StashScoped,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """A stash's golden examples: payloads with the verdict its pipeline must give them."""

    serializer_class = ExampleSerializer
    permission_classes = [IsAuthenticated, permissions.ExamplePermissions]
    pagination_class = None
    lookup_value_regex = "[0-9]+"

    def get_queryset(self):
        return self.of_stash(Example.objects.select_related("created_by"))

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "stash": getattr(self, "stash", None)}

    def perform_create(self, serializer):
        serializer.save(stash=self.stash, created_by=self.request.user)

    @extend_schema(
        summary="Run a stash's golden examples",
        description="Through its current hooks, in a child process (nothing is saved or counted, no sink is "
        "called). Needs `stash.view_example`.",
        parameters=[STASH_SLUG],
        request=None,
        responses={200: ExampleRunSerializer, **errors(401, 403, 404), **SLOW},
    )
    @action(detail=False, methods=["post"], permission_classes=[IsAuthenticated, permissions.CanRunExamples])
    def run(self, request, stash_slug=None):
        results = processing.run_examples(self.stash)
        return Response(
            {"passed": all(result.passed for result in results), "results": [result.as_dict() for result in results]}
        )
