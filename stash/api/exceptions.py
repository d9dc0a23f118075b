"""Every API failure is JSON with a message: DRF's errors, Django's and stash's, and no 500.

``exception_handler`` is DRF's ``EXCEPTION_HANDLER``: on top of DRF's own it answers a body over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` or a payload over its stash's limit with 413, a reused
idempotency key, a stale ``config_version`` or a shadow that conflicts (a second one running) with 409,
a stash past its ``max_waiting`` with 429 and ``Retry-After``, a model ``ValidationError`` or a pipeline
document that cannot be imported with 400 per field, a change that breaks golden examples with
409 and the broken ones, and hooks that outlast simulate's deadline with 503. ``bad_request``,
``page_not_found`` and ``server_error`` are the project's error views (``handler400`` and so on):
JSON under ``/api/``, Django's pages elsewhere.
"""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, ValidationError as DjangoValidationError
from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler, set_rollback

from stash.core.exceptions import IdempotencyConflict, PayloadTooLarge, StaleConfig, StashFull
from stash.models import PipelineVersion
from stash.ops.access import API_PREFIX
from stash.processing import ExamplesBroken, InvalidDocument, InvalidItems, PipelineChanged, ShadowConflict, Unanswered

logger = logging.getLogger(__name__)


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request is too large."
    default_code = "too_large"


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


class Unavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The hooks could not answer in time."
    default_code = "unavailable"


def body_too_large_message():
    return f"The request body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes this server accepts."


def exception_handler(exc, context):
    """DRF's handler, after turning Django's and stash's errors into API errors."""
    if isinstance(exc, ExamplesBroken):
        # Not an APIException: DRF would turn every value of the results into a string.
        set_rollback()
        return Response(
            {"detail": str(exc), "examples": [result.as_dict() for result in exc.broken]},
            status=status.HTTP_409_CONFLICT,
        )
    return drf_exception_handler(as_api_exception(exc), context)


def as_api_exception(exc):
    """The ``APIException`` that answers ``exc``, or ``exc`` itself when there is none."""
    if isinstance(exc, RequestDataTooBig):
        return RequestTooLarge(body_too_large_message())
    if isinstance(exc, PayloadTooLarge):
        return RequestTooLarge(str(exc))
    if isinstance(exc, StashFull):
        full = exceptions.Throttled(detail=str(exc))
        full.wait = exc.retry_after  # Retry-After, without DRF's "Expected available in"
        return full
    if isinstance(exc, (IdempotencyConflict, StaleConfig, PipelineChanged, ShadowConflict)):
        return Conflict(str(exc))
    if isinstance(exc, Unanswered):
        return Unavailable(str(exc))
    if isinstance(exc, InvalidDocument):  # by hook index and field, as DRF names a list's bad items
        return exceptions.ValidationError(exc.nested())
    if isinstance(exc, PipelineVersion.DoesNotExist):
        return exceptions.NotFound(str(exc))
    if isinstance(exc, InvalidItems):  # as DRF names a list's bad items
        return exceptions.ValidationError({"items": {str(index): messages for index, messages in exc.by_index.items()}})
    if isinstance(exc, DjangoValidationError) and _payload_too_large(exc):
        return RequestTooLarge(exc.message_dict["payload"][0])
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return exceptions.ValidationError(detail)
    if isinstance(exc, SuspiciousOperation):  # e.g. too many fields: the request is at fault
        return exceptions.ParseError(str(exc) or "The request could not be read.")
    return exc


def _payload_too_large(exc):
    """True for ``models.validate_payload``'s error on a payload over its stash's limit."""
    return [error.code for error in getattr(exc, "error_dict", {}).get("payload", [])] == ["too_large"]


def _is_api(request):
    return request.path_info.startswith(API_PREFIX)


def bad_request(request, exception, template_name="400.html"):
    """400 (413 for an oversized body): JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        error = as_api_exception(exception)
        if not isinstance(error, exceptions.APIException):
            error = exceptions.ParseError("The request could not be read.")
        return JsonResponse({"detail": str(error.detail)}, status=error.status_code)
    if isinstance(exception, RequestDataTooBig):
        return render(
            request, "stash/error.html", {"title": "Too large", "message": body_too_large_message()}, status=413
        )
    return defaults.bad_request(request, exception, template_name)


def page_not_found(request, exception, template_name="404.html"):
    """404: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
    return defaults.page_not_found(request, exception, template_name)


def server_error(request, template_name="500.html"):
    """500, which the API is built never to answer: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "Internal server error."}, status=500)
    return defaults.server_error(request, template_name)
