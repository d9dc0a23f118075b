"""What a reviewer sees of a payload: its texts as text, its file (an image shown inline only when
its bytes are one), the rest as indented JSON.

    preview({"text": "hi", "b64_file": "iVBORw0KGgo...", "data": {"n": 1}})
    # Preview(texts=[("text", "hi")], file=FilePreview(kind="png", image="data:image/png;base64,..."),
    #         data='{\\n  "data": {\\n    "n": 1\\n  }\\n}')

``short_preview`` is the same in one line of a list: a text excerpt, the filename, a thumbnail.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from stash.hooks.filetypes import decode, detect

FILE_KEY = "b64_file"
# Types every browser shows in an <img>, by their bytes (never by a name or media type the
# submitter gave): anything else, SVG included, is described, never rendered.
IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


@dataclass(frozen=True)
class FilePreview:
    """A payload's file: its type by magic bytes, its size, and a data: URL when it is an image."""

    kind: str
    size: int = 0
    image: str = ""
    error: str = ""


@dataclass(frozen=True)
class Preview:
    texts: list[tuple[str, str]] = field(default_factory=list)
    file: FilePreview | None = None
    data: str = ""


def preview(payload: Any) -> Preview:
    """``payload``'s top-level strings as text, its ``b64_file`` decoded and typed, the rest as JSON."""
    if not isinstance(payload, dict):
        return Preview(data=_json(payload))
    texts = [(key, value) for key, value in payload.items() if isinstance(value, str) and key != FILE_KEY]
    rest = {key: value for key, value in payload.items() if not isinstance(value, str) and key != FILE_KEY}
    return Preview(
        texts=texts,
        file=file_preview(payload[FILE_KEY]) if FILE_KEY in payload else None,
        data=_json(rest) if rest else "",
    )


def file_preview(value: Any) -> FilePreview:
    """A base64 file described; an image (by its bytes) gets a data: URL of its own re-encoding."""
    if not isinstance(value, str):
        return FilePreview(kind="unknown", error="not base64 text")
    try:
        data = decode(value)
    except ValueError as exc:
        return FilePreview(kind="unknown", error=f"not valid base64 ({exc})")
    kind = detect(data)
    image = ""
    if kind in IMAGE_TYPES:
        image = f"data:{IMAGE_TYPES[kind]};base64,{base64.b64encode(data).decode('ascii')}"
    return FilePreview(kind=kind, size=len(data), image=image)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


# --- a payload in one line of a list (a replay's changes) --------------------------------------

#: How much of a payload's text a short preview shows.
EXCERPT_CHARS = 80
#: Larger images are described by their filename only in a short preview: a list shows many.
MAX_THUMBNAIL_BYTES = 256 * 1024


@dataclass(frozen=True)
class ShortPreview:
    text: str = ""  # an excerpt of its text (else of its first other text, else of its JSON)
    filename: str = ""
    image: str = ""  # a data: URL of its image (by its bytes), when small enough


def short_preview(payload: Any) -> ShortPreview:
    """``payload`` in a line: an excerpt of its ``text`` cut to ``EXCERPT_CHARS``, its ``filename``,
    and its ``b64_file`` as a thumbnail when that is an image of at most ``MAX_THUMBNAIL_BYTES``."""
    full = preview(payload)
    texts = dict(full.texts)
    filename = texts.pop("filename", "")
    text = texts.get("text") or next(iter(texts.values()), "") or full.data
    small = full.file is not None and full.file.size <= MAX_THUMBNAIL_BYTES
    return ShortPreview(text=_excerpt(text), filename=filename, image=full.file.image if small else "")


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"
