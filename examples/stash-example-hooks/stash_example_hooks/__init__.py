"""Example stash hooks shipped in a package: ``example.max_links`` drops link spam."""

import re

from stash import hooks

_LINK = re.compile(r"\bhttps?://", re.IGNORECASE)


@hooks.register("example.max_links")
class MaxLinks(hooks.Filter):
    """Drop content whose text holds more than max links."""

    params_schema = {
        "type": "object",
        "properties": {
            "max": {"type": "integer", "minimum": 0, "default": 2, "description": "Most links kept in one text field."}
        },
        "additionalProperties": False,
    }

    def filter(self, item):
        limit = self.params.get("max", 2)
        text = item.payload.get("text")
        count = len(_LINK.findall(text)) if isinstance(text, str) else 0
        if count > limit:
            return self.drop(f"text has {count} links, more than {limit}", "too_many_links")
        return self.keep()
