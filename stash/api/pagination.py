"""Pagination of item lists: a cursor, so pages stay put while new items arrive."""
from rest_framework.pagination import CursorPagination


class ContentCursorPagination(CursorPagination):
    """Newest first, ``?cursor=`` from ``next``/``previous``; ``?page_size=`` up to 500."""

    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
