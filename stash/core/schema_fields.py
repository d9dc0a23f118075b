"""Which JSON Schemas a form can show field by field, and as which fields.

One rule for both generated forms: a hook's params in the admin (``stash.admin.params``) and a
stash's payload in the public submit form (``stash.web.forms``). Each face turns the fields into its
own widgets; a schema this module cannot show faithfully (a free-form object, a union of types, a
list of lists) gets raw JSON only, in both.

    >>> fields({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}})
    {'tags': {'type': 'array', 'items': {'type': 'string'}}}
"""

from __future__ import annotations

from typing import Any

SCALARS = ("string", "number", "integer", "boolean")
# The JSON type of an enum's values, when a schema names none: all of one kind, or no form.
_ENUM_TYPES = ((bool, "boolean"), (int, "integer"), ((int, float), "number"), (str, "string"))
# Keywords a generated form understands and that mean the same there.
KEPT = ("default", "enum", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems")


def fields(schema: Any) -> dict[str, dict[str, Any]] | None:
    """``{name: field}`` for an object ``schema`` of named properties, each a string, number,
    integer, boolean, a choice (``enum``) or a list of those; None when any property is none of
    these. A field is the property's ``type`` (inferred from its ``enum`` if absent), the ``KEPT``
    keywords it has and, for a list, its ``items`` as a field."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    found = {}
    for name, spec in properties.items():
        one = field(spec)
        if one is None:
            return None
        found[name] = one
    return found


def required(schema: dict[str, Any]) -> frozenset[str]:
    """The names ``schema`` requires (a malformed ``required`` counts as none)."""
    names = schema.get("required")
    return frozenset(name for name in names if isinstance(name, str)) if isinstance(names, list) else frozenset()


def field(spec: Any) -> dict[str, Any] | None:
    """One property's field (see ``fields``), or None when a form cannot show it."""
    if not isinstance(spec, dict):
        return None
    kind = spec.get("type")
    if kind is None and isinstance(spec.get("enum"), list):
        kind = _enum_type(spec["enum"])
    kept = {key: spec[key] for key in KEPT if key in spec}
    if kind in SCALARS:
        kept.pop("uniqueItems", None)
        return {"type": kind, **kept}
    if kind == "array":
        item = field(spec.get("items"))
        if item is None or item["type"] == "array":
            return None
        return {"type": "array", "items": item, **kept}
    return None


def _enum_type(values: list[Any]) -> str | None:
    for types, name in _ENUM_TYPES:
        if values and all(
            isinstance(value, types) and (name == "boolean" or not isinstance(value, bool)) for value in values
        ):
            return name
    return None
