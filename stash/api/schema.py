"""OpenAPI helpers: the documented error answers that many endpoints share, and schema corrections."""
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse

from .serializers import ContentEditSerializer, ErrorSerializer

_MEANINGS = {
    400: "Invalid input: the body maps each field to its errors (non_field_errors when about no one field).",
    401: "Not authenticated: log in or send `Authorization: Token <token>`.",
    403: "Authenticated, but without the permission this needs.",
    404: "No such object, or not one you may see.",
    405: "Method not allowed.",
    409: "Conflict with the current state.",
    413: "Too large: the request body, or a payload over its stash's max_payload_bytes.",
    415: "Unsupported media type: send application/json.",
    429: "Too many requests: wait as Retry-After says.",
    503: "The hooks did not answer within STASH_SIMULATE_TIMEOUT seconds (the detail names the hook).",
}


def errors(*codes):
    """``responses`` entries for the given error status codes."""
    return {code: OpenApiResponse(OpenApiTypes.OBJECT if code == 400 else ErrorSerializer, description=_MEANINGS[code])
            for code in codes}


class ContentEditSchema(OpenApiSerializerExtension):
    """``PATCH contents/<id>/`` replaces the payload whole: its body needs ``payload``.

    drf-spectacular documents every PATCH body as partial (nothing required); this view reads
    ``ContentEditSerializer`` as it is, so the schema does too.
    """

    target_class = ContentEditSerializer
