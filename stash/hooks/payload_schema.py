"""The ``json_schema`` filter: the payload against a JSON Schema the admin gives, patterns run on RE2."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import jsonschema  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

from stash.core import pipeline, schema_words
from stash.core.registry import register
from stash.hooks.base import Filter
from stash.hooks.paths import excerpt
from stash.hooks.patterns import compile_pattern, pattern_error

# Keywords whose value maps names to subschemas; the names themselves are data.
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})
# Keywords whose value is data, never a subschema.
_DATA = frozenset({"enum", "const", "default", "examples"})


def _re2_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    """The ``pattern`` keyword on RE2, so a payload cannot make it backtrack for ever."""
    if validator.is_type(instance, "string") and compile_pattern(pattern).search(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")  # worded by schema_words


def _validator_class(schema: Any) -> Any:
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return jsonschema.validators.extend(base, {"pattern": _re2_pattern})


def schema_problems(schema: Any, path: str = "schema") -> list[tuple[str, str]]:
    """Why ``schema`` cannot be used, keyword by keyword: ``[(path, message)]``.

    Patterns must be RE2; ``patternProperties`` is refused, as the validator would run it on
    Python's backtracking engine; ``$ref`` must stay inside the schema (no fetching).
    """
    problems = []
    if isinstance(schema, list):
        for index, child in enumerate(schema):
            problems += schema_problems(child, f"{path}.{index}")
        return problems
    if not isinstance(schema, dict):
        return problems
    for key, value in schema.items():
        where = f"{path}.{key}"
        if key in _DATA:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, child in value.items():
                problems += schema_problems(child, f"{where}.{name}")
        elif key == "pattern" and isinstance(value, str):
            error = pattern_error(value)
            if error:
                problems.append((where, error))
        elif key == "patternProperties":
            problems.append((where, "patternProperties is not supported; use properties, or the regex filter"))
        elif key == "$ref" and isinstance(value, str) and not value.startswith("#"):
            problems.append((where, f"only references inside the schema (#/...) are allowed, not {value!r}"))
        else:
            problems += schema_problems(value, where)
    return problems


@register("json_schema")
class JsonSchema(Filter):
    """Drop content whose payload does not validate against a JSON Schema."""

    params_schema = {
        "type": "object",
        "properties": {
            "schema": {"type": "object", "description": "A JSON Schema (draft 2020-12 unless $schema says)."}
        },
        "required": ["schema"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        schema = params["schema"]
        try:
            _validator_class(schema).check_schema(schema)
            return dict(schema_problems(schema))
        except jsonschema.SchemaError as exc:
            where = ".".join(str(part) for part in exc.absolute_path)
            return {"schema": f"not a valid JSON Schema: {exc.message}" + (f" (at {where})" if where else "")}
        except RecursionError:
            return {"schema": "the schema is nested too deeply"}

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        schema = self.params["schema"]
        self._validator = _validator_class(schema)(schema)

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        error = best_match(self._validator.iter_errors(item.payload))
        if error is None:
            return self.keep()
        where, words = schema_words.worded(error, "payload")  # in words, never the pattern nor the value
        return self.drop(f"{where}: {excerpt(words, 300)}", "schema_mismatch")
