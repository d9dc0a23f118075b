"""The bundled classifiers: ``profanity``, ``language`` and ``image_hash``, with models shipped in their wheels.

    Profanity({"threshold": 0.8}).filter_many(items)    # one decision per item, one model call
    Language({"allowed": ["en", "de"]}).filter(item)     # drop(..., "language") for French text
    image_hash(open("cat.png", "rb").read())             # "fcc5a17c9aa443b8", as the blocklist wants it

Each model is loaded on first use and kept for the life of the process (``_profanity_model``,
``_language_detector``): importing stash loads none of them, and a web process that never runs one of
these hooks never pays for it. A worker pool process loads those its enabled hooks use when it starts
(``warm_up``, from ``hooksite.celery``), so no judging message waits for them. Nothing is downloaded
at run time.
"""

from __future__ import annotations

import copy
import functools
import io
import warnings
from typing import Any, Callable, Iterable, Mapping, Sequence

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks.base import Filter
from stash.hooks.filetypes import decode
from stash.hooks.paths import MISSING, assign, lookup, texts_at

#: Only this much of each text is judged, so one item's cost is bounded.
MAX_TEXT_CHARS = 10_000

_FIELDS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "minItems": 1,
    "description": "Dotted paths of the text to judge (default: every text in the payload).",
}

# ---------------------------------------------------------------------------------------------
# profanity


@functools.cache
def _profanity_model() -> tuple[Any, Any]:
    """alt-profanity-check's vectorizer and linear model, loaded once per process.

    Its module attributes, not its documented ``predict_prob``: that one adds a Python call per text.
    Read against alt-profanity-check 1.9.1 (tests/hooks/test_classifiers.py checks the pin).
    """
    from profanity_check import profanity_check  # type: ignore[import-untyped]  # loads the model files

    return profanity_check.vectorizer, profanity_check.model


def offensive_probabilities(texts: Sequence[str]) -> list[float]:
    """The probability that each text is offensive, in one call of the model::

    offensive_probabilities(["have a nice day", "shut the fuck up"])   # [0.06, 1.0]
    """
    if not texts:
        return []
    vectorizer, model = _profanity_model()
    matrix = vectorizer.transform([text[:MAX_TEXT_CHARS] for text in texts])
    return [float(p) for p in model.predict_proba(matrix)[:, 1]]


@register("profanity")
class Profanity(Filter):
    """Drop (or hold) text whose offensive-language probability is above a threshold."""

    params_schema = {
        "type": "object",
        "properties": {
            "threshold": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "default": 0.5,
                "description": "Act on a text whose probability of being offensive is above this (0 to 1).",
            },
            "fields": _FIELDS,
            "action": {
                "enum": ["drop", "hold"],
                "default": "drop",
                "description": "drop rejects the item; hold keeps it for a person to decide.",
            },
        },
        "additionalProperties": False,
    }

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        _profanity_model()  # loaded with the pipeline, not inside an item's timed run

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        return self.filter_many([item])[0]

    def filter_many(self, items: list[pipeline.Item]) -> list[pipeline.Decision]:
        """One decision per item: the model is called once for every text of every item."""
        fields = self.params.get("fields")
        found = [[(path, text) for path, text in texts_at(item.payload, fields) if text.strip()] for item in items]
        scores = iter(offensive_probabilities([text for texts in found for _, text in texts]))
        threshold = self.params.get("threshold", 0.5)
        decide = self.hold if self.params.get("action", "drop") == "hold" else self.drop
        decisions = []
        for texts in found:
            worst_path, worst = "", -1.0
            for path, _ in texts:
                score = next(scores)
                if score > worst:
                    worst_path, worst = path, score
            if worst > threshold:
                decisions.append(
                    decide(
                        f"offensive language in {worst_path} (probability {worst:.2f}, above {threshold:g})",
                        "profanity",
                        field=worst_path,
                    )
                )
            else:
                decisions.append(self.keep())
        return decisions


# ---------------------------------------------------------------------------------------------
# language

#: The ISO 639-1 codes of the 75 languages the detector knows (lingua 2.1).
LANGUAGES = (
    "af", "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "eo", "es", "et", "eu",
    "fa", "fi", "fr", "ga", "gu", "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "kk", "ko", "la",
    "lg", "lt", "lv", "mi", "mk", "mn", "mr", "ms", "nb", "nl", "nn", "pa", "pl", "pt", "ro", "ru", "sk", "sl",
    "sn", "so", "sq", "sr", "st", "sv", "sw", "ta", "te", "th", "tl", "tn", "tr", "ts", "uk", "ur", "vi", "xh",
    "yo", "zh", "zu",
)  # fmt: skip


@functools.cache
def _language_detector(accuracy: str = "high") -> Any:
    """lingua's detector over all its languages, built once per process and ``accuracy``.

    High accuracy mode (the default) is the one that is right on short texts: 38 of 40 short
    English comments, where low accuracy mode (trigrams only) finds 23 (docs/hooks.md). Its models
    take about 1.2 GB and 15 seconds to load; low accuracy mode's 90 MB and half a second. They are
    all loaded when the detector is built (with the pipeline), so no item's timed run waits for one.
    Every language is kept: a detector that only knew the allowed ones would find them everywhere.
    """
    import lingua

    builder = lingua.LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models()
    return (builder.with_low_accuracy_mode() if accuracy == "low" else builder).build()


def detect_languages(texts: Sequence[str], accuracy: str = "high") -> list[dict[str, float]]:
    """For each text, the confidence (0 to 1) of each language by ISO 639-1 code; ``{}`` for a text
    with no letters::

        detect_languages(["Wo ist der Bahnhof?"])   # [{"de": 0.98, "nl": 0.01, ...}]
    """
    if not texts:
        return []
    detector = _language_detector(accuracy)
    clipped = [text[:MAX_TEXT_CHARS] for text in texts]
    if len(clipped) == 1:
        results = [detector.compute_language_confidence_values(clipped[0])]
    else:
        results = detector.compute_language_confidence_values_in_parallel(clipped)
    return [
        {value.language.iso_code_639_1.name.lower(): value.value for value in values if value.value > 0}
        for values in results
    ]


@register("language")
class Language(Filter):
    """Keep only text in the allowed languages, or (with write_to) record each item's language in a field."""

    params_schema = {
        "type": "object",
        "properties": {
            "allowed": {
                "type": "array",
                "items": {"enum": list(LANGUAGES)},
                "minItems": 1,
                "uniqueItems": True,
                "description": 'ISO 639-1 codes of the languages to keep, e.g. ["en", "de"].',
            },
            "min_confidence": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "default": 0,
                "description": "Keep only when the allowed languages together have at least this confidence "
                "(0 to 1); with write_to, a language below it is recorded as null. Confidences are shared "
                "among 75 languages: a right guess on a few words may have 0.1.",
            },
            "fields": _FIELDS,
            "accuracy": {
                "enum": ["high", "low"],
                "default": "high",
                "description": "high is right on short texts and needs about 1.1 GB per worker process; "
                "low needs 90 MB and is right on sentences, often wrong on a few words.",
            },
            "write_to": {
                "type": "string",
                "minLength": 1,
                "description": "Instead of filtering: the dotted path to record the language in, "
                'as {"language": "de", "confidence": 0.98}.',
            },
        },
        "additionalProperties": False,
    }

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        # Loaded with the pipeline, once per process: the first item's run must not wait for it.
        _language_detector(self.params.get("accuracy", "high"))
        if self.params.get("write_to"):
            # Recording the language changes the payload: the runner calls transform().
            setattr(self, "kind", "transform")  # noqa: B010 - an instance's kind, not the class's

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        if "allowed" in params and "write_to" in params:
            return {"write_to": "Give allowed (to filter) or write_to (to record the language), not both."}
        if "allowed" not in params and "write_to" not in params:
            return {"allowed": "Give the allowed languages, or write_to to record the language instead."}
        return {}

    def _judge(self, items: list[pipeline.Item]) -> list[tuple[str, dict[str, float]] | None]:
        """For each item, the field with most of its text and the languages of its text; None without text."""
        fields = self.params.get("fields")
        written = self.params.get("write_to", "\0")  # a language recorded before is not text to judge
        found = []
        for item in items:
            texts = [
                (path, text)
                for path, text in texts_at(item.payload, fields)
                if text.strip() and path != written and not path.startswith(written + ".")
            ]
            found.append((max(texts, key=lambda t: len(t[1]))[0], "\n".join(t for _, t in texts)) if texts else None)
        joined = [entry[1] for entry in found if entry]
        confidences = iter(detect_languages(joined, self.params.get("accuracy", "high")))
        return [(entry[0], next(confidences)) if entry else None for entry in found]

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        return self.filter_many([item])[0]

    def filter_many(self, items: list[pipeline.Item]) -> list[pipeline.Decision]:
        """One decision per item; the detector runs once over the batch. An item is kept when its most
        likely language is allowed and the allowed languages together reach ``min_confidence``.

        An item without text, or whose text has no letters, is kept: it is in no language.
        """
        allowed = self.params.get("allowed") or []
        minimum = self.params.get("min_confidence", 0)
        decisions = []
        for judged in self._judge(items):
            if judged is None or not judged[1]:
                decisions.append(self.keep())
                continue
            path, confidences = judged
            top, confidence = max(confidences.items(), key=lambda pair: pair[1])
            in_allowed = sum(confidences.get(code, 0.0) for code in allowed)
            if top in allowed and in_allowed >= minimum:
                decisions.append(self.keep())
                continue
            if top in allowed:
                reason = f"language of {path} is uncertain: {top} at {in_allowed:.2f}, below {minimum:g}"
            else:
                reason = f"language of {path} is {top} (confidence {confidence:.2f}), not one of {', '.join(allowed)}"
            decisions.append(self.drop(reason, "language", field=path))
        return decisions

    def transform(self, item: pipeline.Item) -> Mapping[str, Any] | None:
        return self.transform_many([item])[0]

    def transform_many(self, items: list[pipeline.Item]) -> list[Mapping[str, Any] | None]:
        """Each item's payload with ``{"language": code or None, "confidence": x}`` at ``write_to``.

        Raises ``ValueError`` when ``write_to`` runs through a value that is not an object.
        """
        target = self.params["write_to"]
        minimum = self.params.get("min_confidence", 0)
        payloads: list[Mapping[str, Any] | None] = []
        for item, judged in zip(items, self._judge(items), strict=True):
            language, confidence = None, 0.0
            if judged is not None and judged[1]:
                top, confidence = max(judged[1].items(), key=lambda pair: pair[1])
                language = top if confidence >= minimum else None
            payload = copy.deepcopy(dict(item.payload))
            assign(payload, target, {"language": language, "confidence": round(confidence, 4)})
            payloads.append(payload)
        return payloads


# ---------------------------------------------------------------------------------------------
# loading the models before the first item

#: The hooks whose models ``warm_up`` loads.
PRELOADED = ("profanity", "language")


def warm_up(configs: Iterable[tuple[str, Any]]) -> list[str]:
    """Load the models that hooks of these ``(hook name, params)`` pairs use, each once, as their
    pipelines would; what it loaded, in order. Other hooks, and params a hook would refuse, are
    passed over::

        warm_up([("language", {"allowed": ["en"]}), ("regex", {...})])   # ["language (high accuracy)"]: ~15 s
    """
    loaders: dict[str, Callable[[], Any]] = {}
    for hook, params in configs:
        if hook == "profanity":
            loaders.setdefault("profanity", _profanity_model)
        elif hook == "language":
            accuracy = params.get("accuracy", "high") if isinstance(params, Mapping) else "high"
            if accuracy in ("high", "low"):
                # Positional, as Language() calls it: the cache knows the call by its arguments.
                loaders.setdefault(f"language ({accuracy} accuracy)", functools.partial(_language_detector, accuracy))
    for load in loaders.values():
        load()
    return list(loaders)


# ---------------------------------------------------------------------------------------------
# image_hash

#: The decoder refuses larger files and images: a decompression bomb is caught before it is decoded.
MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_IMAGE_PIXELS = 25_000_000
#: The formats it reads; anything else is not an image to it.
IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")


class ImageError(ValueError):
    """The bytes are not an image the hash can be taken of (undecodable, too large, too many pixels)."""


def image_hash(data: bytes, max_bytes: int = MAX_IMAGE_BYTES, max_pixels: int = MAX_IMAGE_PIXELS) -> str:
    """The perceptual hash (pHash, 64 bits) of an image file's bytes, as 16 hex digits.

    Raises ``ImageError`` for bytes that are not a PNG, JPEG, GIF, WebP, BMP or TIFF image, are over
    ``max_bytes``, or whose header declares more than ``max_pixels`` pixels (checked before any pixel
    is decoded).
    """
    import imagehash
    from PIL import Image, UnidentifiedImageError

    if len(data) > max_bytes:
        raise ImageError(f"the file is {len(data)} bytes, over the limit of {max_bytes}")
    try:
        with warnings.catch_warnings():
            # Pillow's own bomb warning: our limit below is lower, so the image is refused anyway.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
    except Image.DecompressionBombError:
        raise ImageError(
            f"the image has far more pixels than the limit of {max_pixels}: a decompression bomb"
        ) from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ImageError(f"not an image that can be read ({exc})") from None
    with image:
        width, height = image.size
        if width * height > max_pixels:
            raise ImageError(f"the image is {width}x{height} pixels, over the limit of {max_pixels}")
        # JPEG decodes at a reduced scale when asked: the hash looks at 32x32 pixels anyway.
        image.draft("L", (256, 256))
        try:
            return str(imagehash.phash(image))
        except (OSError, ValueError, SyntaxError) as exc:  # a truncated or corrupt body
            raise ImageError(f"not an image that can be read ({exc})") from None


def hash_distance(first: str, second: str) -> int:
    """The number of bits in which two hex hashes differ (Hamming distance)."""
    return bin(int(first, 16) ^ int(second, 16)).count("1")


@register("image_hash")
class ImageHash(Filter):
    """Drop images (a base64 field) whose perceptual hash is close to one on a blocklist."""

    params_schema = {
        "type": "object",
        "properties": {
            "field": {
                "type": "string",
                "minLength": 1,
                "default": "b64_file",
                "description": "Dotted path of the base64 image.",
            },
            "blocklist": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[0-9a-fA-F]{16}$", "description": "16 hex digits."},
                "minItems": 1,
                "description": "Hashes of images to drop (16 hex digits each, from manage.py stash_image_hashes).",
            },
            "max_distance": {
                "type": "integer",
                "minimum": 0,
                "maximum": 32,
                "default": 8,
                "description": "Drop when the hash differs from a listed one in at most this many of its 64 bits.",
            },
            "max_bytes": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50 * 1024 * 1024,
                "default": MAX_IMAGE_BYTES,
                "description": "Largest image file it decodes, in bytes.",
            },
            "max_pixels": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100_000_000,
                "default": MAX_IMAGE_PIXELS,
                "description": "Largest image it decodes, in pixels (width times height).",
            },
        },
        "required": ["blocklist"],
        "additionalProperties": False,
    }

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        """Keep an item without the field; raise ``ImageError`` for one whose image cannot be read,
        so the hook's ``on_error`` policy decides (reject, skip or hold)."""
        field = self.params.get("field", "b64_file")
        max_bytes = self.params.get("max_bytes", MAX_IMAGE_BYTES)
        value = lookup(item.payload, field)
        if value is MISSING or value is None or value == "":
            return self.keep()
        if not isinstance(value, str):
            raise ImageError(f"{field} is not base64 text")
        # Refused by length before decoding: a huge string is never turned into huge bytes.
        if len(value) * 3 // 4 > max_bytes * 2 + 1024:
            raise ImageError(f"{field} is about {len(value) * 3 // 4} bytes, over the limit of {max_bytes}")
        try:
            data = decode(value)
        except ValueError as exc:
            raise ImageError(f"{field} is not valid base64 ({exc})") from None
        try:
            digest = image_hash(data, max_bytes, self.params.get("max_pixels", MAX_IMAGE_PIXELS))
        except ImageError as exc:
            raise ImageError(f"{field}: {exc}") from None
        limit = self.params.get("max_distance", 8)
        distance, listed = min((hash_distance(digest, entry), entry.lower()) for entry in self.params["blocklist"])
        if distance <= limit:
            return self.drop(
                f"image in {field} matches blocked image {listed} "
                f"(hash {digest}, distance {distance} of at most {limit})",
                "image_match",
                field=field,
            )
        return self.keep()
