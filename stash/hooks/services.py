"""Hooks that ask an outside service: ``moderation_api`` posts fields to a moderation service.

The request, one per batch (``filter_many``), signed with ``X-Stash-Signature``::

    {"items": [{"id": "c0ffee", "fields": {"title": "…", "body": "…"}}, …]}

The answer, one entry per item in the same order (an ``id``, if given, must match)::

    {"items": [{"id": "c0ffee", "score": 0.93}, …]}

An item whose score at ``score_path`` is above ``threshold`` is dropped (code ``moderation``).

With ``mode: async`` each item carries the URL at which the service gives its answer later, and
the service answers ``202`` at once; every item asked is then *pending* (it waits)::

    {"items": [{"id": "c0ffee", "fields": {…}, "callback_url": "https://…/api/callbacks/<token>/"}],
     "mode": "async"}

The service then POSTs ``{"outcome": "keep" | "drop" | "hold", "reason": "…"}`` to each
``callback_url``, signed as the request is (see ``stash.processing.callbacks``).
What fails raises ``ModerationServiceError`` (a timeout, a refused address, a network error, an
answer that is not 2xx or not of that shape), so the hook's ``on_error`` policy decides.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
from typing import Any, Mapping

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks import netguard, paths
from stash.hooks.base import Filter
from stash.hooks.outbound import DEADLINE_FACTOR, SECRET_SCHEMA, URL_SCHEMA, check_url, signature

logger = logging.getLogger(__name__)

#: An answer longer than this is refused: a moderation verdict is a few bytes per item.
MAX_ANSWER_BYTES = 1024 * 1024

#: Sync mode: the longest ``timeout``.
SYNC_TIMEOUT_MAX = 15

#: Async mode: seconds the request itself may wait for each read (the service only says 202).
ASYNC_REQUEST_TIMEOUT = 5.0


class ModerationServiceError(Exception):
    """The moderation service could not be asked, or its answer could not be read."""


@register("moderation_api")
class ModerationApi(Filter):
    """Drop items that an outside moderation service scores above a threshold (public addresses only)."""

    params_schema = {
        "type": "object",
        "properties": {
            "url": {**URL_SCHEMA, "description": "The service's endpoint to POST the items to, http:// or https://."},
            "secret": SECRET_SCHEMA,
            "mode": {
                "enum": ["sync", "async"],
                "default": "sync",
                "description": "sync: the service answers in its reply; async: it answers 202, then "
                "POSTs each item's outcome to its callback_url within the timeout.",
            },
            "fields": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 200},
                "minItems": 1,
                "maxItems": 50,
                "uniqueItems": True,
                "description": "The payload fields (dotted paths) sent to the service; no others are.",
            },
            "score_path": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "default": "score",
                "description": "Where the score is in each answer item (a dotted path, e.g. scores.toxic).",
            },
            "threshold": {"type": "number", "default": 0.5, "description": "An item scored above this is dropped."},
            "feedback_url": {
                **URL_SCHEMA,
                "description": "Where to POST a reviewer's verdict on an item this hook decided (optional), http:// or https://.",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 86400,
                "default": 1,
                "description": "Seconds to wait to connect, and then for each read; the whole "
                "exchange is cut off at twice this. In async mode: seconds the service has to call "
                "back (at most STASH_CALLBACK_MAX_SECONDS); the request itself is cut off as in sync mode.",
            },
        },
        "required": ["url", "secret", "fields"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        from django.conf import settings

        errors = {}
        for key in ("url", "feedback_url"):
            problem = check_url(params[key]) if key in params else None
            if problem:
                errors[key] = problem
        limit = getattr(settings, "STASH_TIME_LIMIT", 30)
        timeout = params.get("timeout", 1)
        if params.get("mode") == "async":
            longest = getattr(settings, "STASH_CALLBACK_MAX_SECONDS", 3600)
            if timeout > longest:
                errors["timeout"] = (
                    f"at most {longest:g} s: the time a service has to call back is bounded by "
                    f"STASH_CALLBACK_MAX_SECONDS ({longest:g} s)"
                )
        elif timeout > SYNC_TIMEOUT_MAX:
            errors["timeout"] = (
                f"at most {SYNC_TIMEOUT_MAX:g} s in sync mode (in async mode it is the time to call back, "
                "up to STASH_CALLBACK_MAX_SECONDS)"
            )
        elif DEADLINE_FACTOR * timeout > limit:
            errors["timeout"] = (
                f"at most {limit / DEADLINE_FACTOR:g} s: the whole exchange (twice the timeout) must fit "
                f"in the time limit of a judging message (STASH_TIME_LIMIT, {limit} s)"
            )
        return errors

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        # In async mode the service answers later, at each item's callback URL.
        self.asynchronous = self.params.get("mode") == "async"

    @property
    def timeout(self) -> float:
        """Seconds the request may wait for each read (in async mode, at most ``ASYNC_REQUEST_TIMEOUT``:
        the ``timeout`` param is then the time to call back)."""
        seconds = float(self.params.get("timeout", 1))
        return min(seconds, ASYNC_REQUEST_TIMEOUT) if self.asynchronous else seconds

    def callback_wait(self) -> float:
        """Async mode: seconds the service has to call back (the ``timeout`` param)."""
        return float(self.params.get("timeout", 1))

    def chosen_fields(self, item: pipeline.Item) -> dict[str, Any]:
        """The values of the ``fields`` param present in the item's payload, by dotted path."""
        values = {}
        for field in self.params["fields"]:
            value = paths.lookup(item.payload, field)
            if value is not paths.MISSING:
                values[field] = value
        return values

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        """One item: a batch of one (see ``filter_many``)."""
        return self.filter_many([item])[0]

    def filter_many(self, items: list[pipeline.Item]) -> list[pipeline.Decision]:
        """A decision per item, in order, from one request for all of them.

        Items with none of the ``fields`` are kept without asking. Raises
        ``ModerationServiceError`` when the service cannot be asked or its answer not read.
        """
        decisions = [self.keep()] * len(items)
        asked = [(index, item, fields) for index, item in enumerate(items) if (fields := self.chosen_fields(item))]
        if asked and self.asynchronous:
            return self.ask_later(items, asked, decisions)
        if asked:
            body = _encode({"items": [{"id": item.id, "fields": fields} for _, item, fields in asked]})
            answer = self.post(self.params["url"], body)
            scores = self.scores(answer, [item.id for _, item, _ in asked])
            for (index, _item, _fields), score in zip(asked, scores, strict=True):
                decisions[index] = self.judge(score)
        return decisions

    def ask_later(
        self, items: list[pipeline.Item], asked: list[tuple[int, pipeline.Item, dict[str, Any]]], decisions: list[Any]
    ) -> list[pipeline.Decision]:
        """Async mode: send the items asked with their callback URLs; the service must answer 202,
        and each of them is then pending. Raises ``ModerationServiceError`` for any other answer
        or an item without a callback URL (so ``on_error`` decides at once)."""
        entries = []
        for _index, item, fields in asked:
            url = item.callbacks.get(self.config_id) if self.config_id is not None else None
            if not url:
                raise ModerationServiceError(
                    f"item {item.id} has no callback URL for this hook (is STASH_PUBLIC_URL set?)"
                )
            entries.append({"id": item.id, "fields": fields, "callback_url": url})
        status = self.post(self.params["url"], _encode({"items": entries, "mode": "async"}), with_status=True)[0]
        if status != 202:
            raise ModerationServiceError(f"POST {self.params['url']} answered {status}, not 202 (async mode)")
        for index, _item, _fields in asked:
            decisions[index] = pipeline.pending("waiting for the moderation service", "moderation_pending")
        return decisions

    def judge(self, score: float) -> pipeline.Decision:
        threshold = self.params.get("threshold", 0.5)
        if score > threshold:
            fields = self.params["fields"]
            return self.drop(
                f"the moderation service scored it {score:g}, above {threshold:g}",
                "moderation",
                fields[0] if len(fields) == 1 else "",
            )
        return self.keep()

    def scores(self, answer: bytes, ids: list[str | None]) -> list[float]:
        """The score of each item from the service's answer; raises ``ModerationServiceError``
        naming what is wrong with it."""
        url = self.params["url"]
        if len(answer) > MAX_ANSWER_BYTES:
            raise ModerationServiceError(f"{url} answered with more than {MAX_ANSWER_BYTES:,} bytes")
        try:
            data = json.loads(answer)
        except ValueError as exc:
            raise ModerationServiceError(f"{url} answered with something that is not JSON: {exc}") from exc
        entries = data.get("items") if isinstance(data, dict) else None
        if not isinstance(entries, list) or len(entries) != len(ids):
            raise ModerationServiceError(
                f'{url} answered without an "items" list of {len(ids)} (one per item sent, in order)'
            )
        path = self.params.get("score_path", "score")
        scores = []
        for position, (entry, sent_id) in enumerate(zip(entries, ids, strict=True)):
            if not isinstance(entry, dict):
                raise ModerationServiceError(f"{url} answered with item {position} not an object")
            if "id" in entry and sent_id is not None and str(entry["id"]) != str(sent_id):
                raise ModerationServiceError(f"{url} answered item {position} for {entry['id']!r}, not {sent_id!r}")
            score = paths.lookup(entry, path)
            if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                raise ModerationServiceError(f"{url} answered item {position} with no number at {path!r}")
            scores.append(float(score))
        return scores

    def post(self, url: str, body: bytes, with_status: bool = False) -> Any:
        """POST signed ``body`` to ``url``, SSRF-guarded and cut off at twice the timeout; the
        answer's body (``with_status``: its status and body). Raises ``ModerationServiceError``
        for any failure or a non-2xx answer."""
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "stash-moderation/1",
            "X-Stash-Signature": signature(self.params["secret"], body),
        }
        timeout = self.timeout
        try:
            status, reason, answer = netguard.exchange(
                url, body, headers, timeout=timeout, deadline=DEADLINE_FACTOR * timeout, max_answer=MAX_ANSWER_BYTES
            )
        except netguard.BlockedAddress as exc:
            raise ModerationServiceError(str(exc)) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise ModerationServiceError(f"POST {url} failed: {type(exc).__name__}: {exc}") from exc
        if not 200 <= status < 300:
            raise ModerationServiceError(f"POST {url} answered {status} {reason}")
        return (status, answer) if with_status else answer

    def feedback(self, item: pipeline.Item, verdict: str) -> None:
        """Tell the service what a person decided about ``item`` (``verdict``), at ``feedback_url``.

        Does nothing without ``feedback_url``. Posts ``{"id", "verdict", "fields"}``, signed as the
        judging request is; raises ``ModerationServiceError`` when that fails, so the task that
        calls it may try again.
        """
        url = self.params.get("feedback_url")
        if not url:
            return
        body = _encode({"id": item.id, "verdict": verdict, "fields": self.chosen_fields(item)})
        self.post(url, body)
        logger.info("Feedback %r for item %s sent to %s", verdict, item.id, url)


def _encode(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str).encode()
