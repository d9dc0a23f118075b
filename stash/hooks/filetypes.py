"""The ``file_type`` filter: a payload's base64 file, decoded, sized and typed by its magic bytes.

    detect(b"%PDF-1.7 ...")     # "pdf"
    detect("héllo".encode())     # "text": UTF-8 without NUL bytes or a known signature

The name a submitter gives a file (or its data URL's media type) is never trusted: the type is
what the bytes are.
"""

from __future__ import annotations

import base64
import binascii

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks.base import Filter
from stash.hooks.paths import MISSING, lookup

# (type, offset, signature); the first that matches wins.
_SIGNATURES = (
    ("png", 0, b"\x89PNG\r\n\x1a\n"),
    ("jpeg", 0, b"\xff\xd8\xff"),
    ("gif", 0, b"GIF87a"),
    ("gif", 0, b"GIF89a"),
    ("tiff", 0, b"II*\x00"),
    ("tiff", 0, b"MM\x00*"),
    ("pdf", 0, b"%PDF-"),
    ("zip", 0, b"PK\x03\x04"),
    ("zip", 0, b"PK\x05\x06"),
    ("gzip", 0, b"\x1f\x8b\x08"),
    ("mp3", 0, b"ID3"),
    ("ogg", 0, b"OggS"),
    ("webm", 0, b"\x1a\x45\xdf\xa3"),
)
# RIFF containers say what they hold at offset 8.
_RIFF = {b"WEBP": "webp", b"WAVE": "wav", b"AVI ": "avi"}
# ISO media files say their brand after "ftyp" at offset 4.
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1"}

#: Every type ``detect`` can name.
TYPES = (
    "avi",
    "gif",
    "gzip",
    "heic",
    "jpeg",
    "mov",
    "mp3",
    "mp4",
    "ogg",
    "pdf",
    "png",
    "text",
    "tiff",
    "wav",
    "webm",
    "webp",
    "zip",
    "unknown",
)


def detect(data: bytes) -> str:
    """The type of ``data`` by its first bytes: one of ``TYPES`` ("unknown" for other binary data)."""
    for kind, offset, signature in _SIGNATURES:
        if data[offset : offset + len(signature)] == signature:
            return kind
    if data[:4] == b"RIFF" and data[8:12] in _RIFF:
        return _RIFF[data[8:12]]
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        return "heic" if brand in _HEIF_BRANDS else "mov" if brand == b"qt  " else "mp4"
    if b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "unknown"
        return "text"
    return "unknown"


def decode(value: str) -> bytes:
    """The bytes of base64 text (standard or URL-safe alphabet, line breaks and a data: prefix allowed).

    Raises ``ValueError`` if it is not base64.
    """
    if value.startswith("data:") and ";base64," in value[:200]:
        value = value.split(";base64,", 1)[1]
    compact = "".join(value.split())
    altchars = b"-_" if ("-" in compact or "_" in compact) else None
    try:
        return base64.b64decode(compact, altchars=altchars, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(str(exc)) from None


@register("file_type")
class FileType(Filter):
    """Drop content whose base64 file is not valid, too large, or not of an allowed type (by magic bytes)."""

    params_schema = {
        "type": "object",
        "properties": {
            "allowed": {
                "type": "array",
                "items": {"enum": list(TYPES)},
                "minItems": 1,
                "uniqueItems": True,
                "description": 'File types to keep, e.g. ["png", "jpeg", "pdf"].',
            },
            "max_bytes": {
                "type": "integer",
                "minimum": 1,
                "default": 10 * 1024 * 1024,
                "description": "Largest decoded file, in bytes.",
            },
            "field": {
                "type": "string",
                "minLength": 1,
                "default": "b64_file",
                "description": "Dotted path of the base64 text.",
            },
            "required": {
                "type": "boolean",
                "default": False,
                "description": "Drop content without a file (otherwise it is kept).",
            },
        },
        "required": ["allowed"],
        "additionalProperties": False,
    }

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        field = self.params.get("field", "b64_file")
        limit = self.params.get("max_bytes", 10 * 1024 * 1024)
        value = lookup(item.payload, field)
        if value is MISSING or value is None or value == "":
            return self.drop(f"missing {field}", "missing_file") if self.params.get("required") else self.keep()
        if not isinstance(value, str):
            return self.drop(f"{field} is not base64 text", "bad_base64")
        # Refuse by length before decoding: a huge string is never turned into huge bytes.
        estimate = (len(value) * 3) // 4
        if estimate > limit * 2 + 1024:
            return self.drop(f"file is about {estimate} bytes, over the limit of {limit}", "file_too_large")
        try:
            data = decode(value)
        except ValueError as exc:
            return self.drop(f"{field} is not valid base64 ({exc})", "bad_base64")
        if len(data) > limit:
            return self.drop(f"file is {len(data)} bytes, over the limit of {limit}", "file_too_large")
        if not data:
            return self.drop(f"{field} is an empty file", "empty_file")
        kind = detect(data)
        allowed = self.params["allowed"]
        if kind not in allowed:
            return self.drop(f"file is {kind}, not one of {', '.join(allowed)}", "file_type")
        return self.keep()
