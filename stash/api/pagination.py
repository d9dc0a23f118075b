"""Pagination of lists that grow (items, pipeline versions): a cursor, so pages stay put while new rows arrive."""

from rest_framework.pagination import CursorPagination

from stash.api.serializers import PageParamsSerializer


class ContentCursorPagination(CursorPagination):
    """Newest first, ``?cursor=`` from ``next``/``previous``; ``?page_size=`` from 1 to 500.

    A ``page_size`` that is not such a number is a 400 naming it (DRF would quietly use the default).
    """

    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = PageParamsSerializer.MAX_PAGE_SIZE

    def get_page_size(self, request):
        params = PageParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        return params.validated_data.get("page_size", self.page_size)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters


class VersionCursorPagination(ContentCursorPagination):
    """A stash's pipeline versions, newest first, in pages as items are."""

    ordering = ("-number",)
