"""What a payload, a queue name and a stored value must be: the checks the models, forms and API share."""

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, overload

from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy as _

from stash.core.exceptions import ExpressionError
from stash.core.expressions import validate_priority
from stash.core.statements import policy_errors

if TYPE_CHECKING:
    from stash.models.stashes import Stash

#: Longest Celery queue name a stash may give: AMQP allows 255 bytes, and the filesystem broker
#: names each message's file after its queue (within the 255 bytes of a file name).
QUEUE_NAME_MAX = 200


def validate_queue_name(value: str) -> None:
    """Raise ``ValidationError`` unless ``value`` can name a Celery queue on every broker stash
    runs on: no blanks, control characters or path separators (the filesystem broker writes it
    into file names), not RabbitMQ's reserved ``amq.`` prefix, at most ``QUEUE_NAME_MAX`` bytes."""
    if any(char.isspace() for char in value):
        raise ValidationError(_("A queue name cannot contain blanks."), code="whitespace")
    if any(unicodedata.category(char) in ("Cc", "Cf", "Cs") for char in value):
        raise ValidationError(_("A queue name cannot contain control characters."), code="control")
    if "/" in value or "\\" in value:
        raise ValidationError(_("A queue name cannot contain / or \\."), code="separator")
    if value.startswith("amq."):
        raise ValidationError(_('Queue names starting with "amq." are reserved by RabbitMQ.'), code="reserved")
    if len(value.encode("utf-8")) > QUEUE_NAME_MAX:
        raise ValidationError(
            _("A queue name has at most %(max)d bytes in UTF-8.") % {"max": QUEUE_NAME_MAX}, code="max_bytes"
        )


@overload
def validate_payload(payload: Any, stash: "Stash") -> bytes: ...
@overload
def validate_payload(payload: Any, stash: None) -> None: ...
def validate_payload(payload: Any, stash: "Stash | None") -> bytes | None:
    """Raise ``ValidationError`` unless ``payload`` is a JSON object every database can store
    (see ``unstorable``) and within ``stash``'s size limit (the error's code is then ``too_large``).

    With a stash, return the payload's ``canonical_json``: it is what was measured.
    """
    if not isinstance(payload, dict):
        raise ValidationError(
            {"payload": _("The payload must be a JSON object, not %(type)s.") % {"type": type(payload).__name__}}
        )
    text = _canonical_text(payload)
    if text is None or not _plainly_storable(text):
        problem = _walked_problem(payload, "payload")
        if problem:
            raise ValidationError({"payload": problem})
    if stash is None:
        return None
    canonical = canonical_json(payload) if text is None else text.encode()
    if len(canonical) > stash.max_payload_bytes:
        message = _("The payload is %(size)d bytes; this stash takes at most %(max)d.") % {
            "size": len(canonical),
            "max": stash.max_payload_bytes,
        }
        raise ValidationError({"payload": ValidationError(message, code="too_large")})
    return canonical


# Deeper payloads are refused: nobody needs them, and walking them costs recursion.
MAX_PAYLOAD_DEPTH = 100


_SURROGATE = re.compile("[\ud800-\udfff]")


# Integers longer than this are refused: well within what Python (4300 digits) and PostgreSQL write.
MAX_INTEGER_DIGITS = 1000


_INTEGER_LIMIT = 10**MAX_INTEGER_DIGITS


_MAX_INT_BITS = int(MAX_INTEGER_DIGITS * math.log2(10))  # no integer of this many bits reaches the limit


_LONG_NUMBER = re.compile(r"\d{%d}" % (MAX_INTEGER_DIGITS + 1))


def unstorable(value: Any, what: str = "payload") -> str:
    """Why ``value`` (a ``what``) cannot be stored as JSON on every database, or "" if it can."""
    text = _canonical_text(value)
    if text is not None and _plainly_storable(text):
        return ""
    return _walked_problem(value, what)


def _canonical_text(value: Any) -> str | None:
    """``value`` as ``canonical_json`` writes it, before encoding; None where that fails."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except Exception:  # anything json cannot write (too deep, a key of mixed type, ...): walk it instead
        return None


def _plainly_storable(text: str) -> bool:
    """True when ``text``, a value as ``_canonical_text`` wrote it, shows that the value passes
    ``_walked_problem``: a scan of the text costs little next to a walk in Python. False says only
    "walk it to know": a string that merely spells one of these trips it too."""
    return (
        "\\u0000" not in text  # JSON always writes a NUL escaped
        and "Infinity" not in text  # and non-finite numbers as Infinity, -Infinity, NaN
        and "NaN" not in text
        # Fewer containers in all than the levels allowed: none can be too deep.
        and text.count("{") + text.count("[") < MAX_PAYLOAD_DEPTH
        and (len(text) <= MAX_INTEGER_DIGITS or not _LONG_NUMBER.search(text))
        # With ensure_ascii off a lone surrogate is written as it is.
        and (text.isascii() or not _SURROGATE.search(text))
    )


def _walked_problem(value: Any, what: str) -> str:
    """``unstorable``'s answer, found by walking ``value``."""
    names = {"what": what}
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_PAYLOAD_DEPTH:
            return gettext("The %(what)s nests deeper than %(depth)d levels.") % {**names, "depth": MAX_PAYLOAD_DEPTH}
        if isinstance(item, dict):
            stack.extend((str(key), depth) for key in item)  # keys can hold a NUL too
            stack.extend((member, depth + 1) for member in item.values())
        elif isinstance(item, list):
            stack.extend((member, depth + 1) for member in item)
        elif isinstance(item, str) and "\x00" in item:
            return gettext("The %(what)s contains a NUL character (\\u0000), which cannot be stored.") % names
        elif isinstance(item, str) and not item.isascii() and _SURROGATE.search(item):
            # JSON can spell a lone surrogate (\ud800); UTF-8, and so every database, cannot.
            return (
                gettext("The %(what)s contains an unpaired surrogate (\\ud800-\\udfff), which is not valid Unicode.")
                % names
            )
        elif isinstance(item, float) and not math.isfinite(item):
            # JSON parsers turn 1e999 into infinity, which JSON itself cannot express.
            return gettext("The %(what)s contains a number too large for JSON.") % names
        elif isinstance(item, int) and item.bit_length() > _MAX_INT_BITS and abs(item) >= _INTEGER_LIMIT:
            # Python writes no integer longer than its int_max_str_digits (4300) as text.
            return gettext("The %(what)s contains an integer of more than %(digits)d digits.") % {
                **names,
                "digits": MAX_INTEGER_DIGITS,
            }
    return ""


def canonical_json(payload: Any) -> bytes:
    """``payload`` as canonical JSON in UTF-8 (keys sorted, no spaces): its length is the payload's size."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def content_hash(payload: Any, canonical: bytes | None = None) -> str:
    """SHA-256 of the payload as canonical JSON: equal payloads, equal hashes.

    Pass ``canonical`` (the payload's ``canonical_json``) if you have it: large payloads are slow to encode.
    """
    return hashlib.sha256(canonical_json(payload) if canonical is None else canonical).hexdigest()


def validate_statement_policy(value: Any) -> None:
    """Raise ``ValidationError`` listing what is wrong with a statement policy (``core.statements``)."""
    errors = policy_errors(value)
    if errors:
        raise ValidationError(errors, code="policy")


def validate_review_priority(value: str) -> None:
    """Raise ``ValidationError`` unless ``value`` is blank or a valid priority expression (CEL)."""
    if value.strip():
        try:
            validate_priority(value)
        except ExpressionError as exc:
            raise ValidationError(str(exc), code="expression") from None


def validate_reason_codes(value: Any) -> None:
    """Raise ``ValidationError`` unless ``value`` is a list of reason codes (1 to 100 characters each)."""
    if not isinstance(value, list) or not all(isinstance(code, str) and 0 < len(code.strip()) <= 100 for code in value):
        raise ValidationError(_("A list of reason codes, each 1 to 100 characters."), code="reason_codes")
    if len(value) > 500:
        raise ValidationError(_("At most 500 reason codes."), code="reason_codes")


#: What an outside service answers for an item (its callback's ``outcome``), as a golden example may give it.
SERVICE_OUTCOMES = ("keep", "drop", "hold")


def validate_service_answers(value: Any, asynchronous: Collection[str] | None = None) -> None:
    """Raise ``ValidationError`` unless ``value`` maps hook titles (a label, or a hook's name) to an
    outside service's answer, ``{"outcome": "keep" | "drop" | "hold", "reason": "..."}``; with
    ``asynchronous`` (the titles of the stash's asynchronous hooks), each title must be one of them."""
    if not isinstance(value, dict):
        raise ValidationError(_("A JSON object: a hook's label to the service's answer."), code="service_answers")
    problems = []
    for title, answer in value.items():
        if not isinstance(answer, dict) or set(answer) - {"outcome", "reason"}:
            problems.append(
                gettext('%(hook)s: must be {"outcome": "keep", "drop" or "hold", "reason": "..."}.') % {"hook": title}
            )
        elif answer.get("outcome") not in SERVICE_OUTCOMES:
            problems.append(
                gettext("%(hook)s: the outcome must be keep, drop or hold, not %(outcome)s.")
                % {"hook": title, "outcome": json.dumps(answer.get("outcome"))}
            )
        elif not isinstance(answer.get("reason", ""), str):
            problems.append(gettext("%(hook)s: the reason must be a string.") % {"hook": title})
        if asynchronous is not None and title not in asynchronous:
            problems.append(
                gettext("%(hook)s: the stash has no asynchronous hook of this label (they are: %(hooks)s).")
                % {"hook": title, "hooks": ", ".join(sorted(asynchronous)) or gettext("none")}
            )
    if problems:
        raise ValidationError(problems, code="service_answers")
