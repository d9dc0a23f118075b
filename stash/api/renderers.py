"""Response renderers: JSON that can always be written, even when it echoes a lone surrogate back."""

from rest_framework import renderers


class JSONRenderer(renderers.JSONRenderer):
    """DRF's JSON renderer (UTF-8, unescaped), falling back to ASCII escapes when UTF-8 cannot encode
    the text: an error that quotes a request's lone surrogate (``"\\ud800" is not a valid choice``)
    then says ``\\ud800``, as JSON spells it, instead of failing with a 500."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return _Escaped().render(data, accepted_media_type, renderer_context)


class _Escaped(renderers.JSONRenderer):
    ensure_ascii = True
