"""What the commands share about JSON files: reading one (a payload, a pipeline document), and
saying why a pipeline document was refused."""

import json
import os
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from stash import processing


def read_json(source, what, check_bytes=None):
    """The JSON value in file ``source`` (standard input for ``-``), ``what`` naming it in errors;
    ``CommandError`` if the file cannot be read or holds no JSON, or if ``check_bytes`` (one of
    ``processing.limits``) refuses its size: a file before it is read."""
    try:
        if source == "-":
            text = sys.stdin.read()
            _check_size(check_bytes, len(text.encode("utf-8", "surrogateescape")))
        else:
            _check_size(check_bytes, os.path.getsize(source))
            with open(source, encoding="utf-8") as file:
                text = file.read()
    except OSError as exc:
        raise CommandError(f"Cannot read {source}: {exc.strerror}.") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"Cannot read {source}: it is not UTF-8 text.") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(
            f"The {what} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting too deep
        raise CommandError(f"The {what} cannot be read: {exc}.") from exc


def _check_size(check_bytes, size):
    if check_bytes is not None:
        try:
            check_bytes(size)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc


def refused(exc):
    """The ``CommandError`` that says why ``exc`` (``InvalidDocument`` or ``ExamplesBroken``) refused
    a document: every faulty field, or every broken golden example, one a line."""
    if isinstance(exc, processing.ExamplesBroken):
        head = (
            f"This change breaks {len(exc.broken)} golden example(s) of {exc.stash.slug}, which refuses such "
            f"changes; nothing was changed:"
        )
        lines = [result.describe() for result in exc.broken]
    else:
        head = "The pipeline document cannot be imported; nothing was changed:"
        lines = [f"{path}: {message}" for path, messages in exc.errors.items() for message in messages]
    return CommandError("\n".join([head, *(f"  {line}" for line in lines)]))


def named_stash(document):
    """The slug a document names (``stash.slug``), or None."""
    settings = document.get("stash") if isinstance(document, dict) else None
    slug = settings.get("slug") if isinstance(settings, dict) else None
    return slug if isinstance(slug, str) and slug else None
