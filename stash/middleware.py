"""Middleware: who makes the changes a request makes (for the pipeline versions they record)."""
from .versioning import authored_by


class ChangeAuthorMiddleware:
    """Changes made while handling a request are its user's: ``request.user``, read when a version is
    written (an API view authenticates after the middleware has run, and sets it then)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with authored_by(lambda: getattr(request, "user", None)):
            return self.get_response(request)
