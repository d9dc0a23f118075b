"""A stash's payload schema: what its submit form asks for, field by field."""

from __future__ import annotations

from typing import Any

from stash.core import schema_fields
from stash.models import HookConfig, Stash

SCHEMA_HOOK = "json_schema"


def payload_schema(stash: Stash) -> dict[str, Any] | None:
    """The JSON Schema of the first enabled ``json_schema`` hook of ``stash`` (by position) when a
    form can show it field by field (``schema_fields.fields``); None otherwise: the stash takes raw
    JSON. The hook still judges every payload, whichever face it came through."""
    config = HookConfig.objects.filter(stash=stash, hook=SCHEMA_HOOK).enabled().in_order().first()
    schema = config.params.get("schema") if config is not None and isinstance(config.params, dict) else None
    return schema if schema_fields.fields(schema) is not None else None
