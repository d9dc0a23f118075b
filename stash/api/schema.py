"""OpenAPI helpers: the documented error answers that many endpoints share, and schema corrections."""

from drf_spectacular.contrib.django_filters import DjangoFilterExtension
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse

from stash.api.filters import QueryForm
from stash.api.pipeline_serializers import ExamplesBrokenSerializer
from stash.api.serializers import ContentEditSerializer, ErrorSerializer

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

#: A change that breaks golden examples of a stash whose examples_policy is "block".
BROKEN = {
    409: OpenApiResponse(
        ExamplesBrokenSerializer,
        description=(
            "The change breaks golden examples of a stash that refuses such changes (examples_policy block): "
            "they passed on the live version and fail on the new one. Nothing changed; `examples` lists the "
            "broken ones. Also (without `examples`) when the pipeline kept changing while its examples ran."
        ),
    )
}
#: The golden examples run in a child process; its failure refuses a change of a stash that blocks.
SLOW = {
    503: OpenApiResponse(
        ErrorSerializer,
        description=(
            "The process running the golden examples failed. Examples not run within STASH_EXAMPLES_TIMEOUT seconds "
            "are not this: they are reported as not run in time."
        ),
    )
}


def errors(*codes):
    """``responses`` entries for the given error status codes."""
    return {
        code: OpenApiResponse(OpenApiTypes.OBJECT if code == 400 else ErrorSerializer, description=_MEANINGS[code])
        for code in codes
    }


class ContentEditSchema(OpenApiSerializerExtension):
    """``PATCH contents/<id>/`` replaces the payload whole: its body needs ``payload``.

    drf-spectacular documents every PATCH body as partial (nothing required); this view reads
    ``ContentEditSerializer`` as it is, so the schema does too.
    """

    target_class = ContentEditSerializer


class NonBlankFilters(DjangoFilterExtension):
    """A filter set whose form refuses a blank parameter (``filters.QueryForm``) has its text
    parameters documented with ``minLength`` 1."""

    priority = 1

    def get_schema_operation_parameters(self, auto_schema, *args, **kwargs):
        parameters = super().get_schema_operation_parameters(auto_schema, *args, **kwargs)
        filterset_class = getattr(auto_schema.view, "filterset_class", None)
        if filterset_class is not None and issubclass(filterset_class._meta.form, QueryForm):
            for parameter in parameters:
                if parameter["schema"].get("type") == "string":
                    parameter["schema"]["minLength"] = 1
        return parameters
