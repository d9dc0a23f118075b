"""Building pipelines: a stash's enabled hooks, in order, as its current version recorded them, built once per
version and kept per process (``pipeline_for``); ``item_for``: what the runner sees of an item.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from django.core.cache import cache as shared_cache

from stash.core import pipeline, registry
from stash.core.documents import HOOK_FIELDS
from stash.core.exceptions import HookUnavailable
from stash.core.expressions import compile_condition, compile_priority
from stash.models import Content, HookConfig, PipelineVersion, Stash
from stash.processing import claiming

logger = logging.getLogger(__name__)


# stash id -> (config_version, Pipeline): built once per stash and version, per process.
_pipelines: dict[int, tuple[int, pipeline.Pipeline]] = {}
# stash id -> (config_version, its compiled review priority or None): kept like the pipelines.
_priorities: dict[int, tuple[int, Callable[[Mapping[str, Any]], float] | None]] = {}


class _Unavailable:
    """Stands in for a hook that cannot run; its failure goes through the config's on_error."""

    kind = "filter"

    def __init__(self, message: str) -> None:
        self.message = message

    def filter(self, item: pipeline.Item) -> NoReturn:
        raise HookUnavailable(self.message)


def build_step(config: HookConfig, stash: Stash) -> pipeline.Step:
    """The pipeline step for one HookConfig; a missing or broken hook becomes a failing step."""
    condition = None
    try:
        hook = registry.get(config.hook)(config.params)
        hook.config_id = config.pk
        if config.condition.strip():
            condition = compile_condition(config.condition)
    except Exception as exc:
        logger.warning("Hook config %s (%s) cannot run: %s", config.pk, config.hook, exc)
        hook = _Unavailable(f"hook {config.hook!r} cannot run: {exc}")
    return pipeline.Step(
        hook=hook,
        name=config.hook,
        label=config.label,
        config_id=config.pk,
        position=config.position,
        mode=config.mode,
        on_error=config.effective_on_error(stash),
        condition=condition,
        timeout=config.timeout_ms / 1000 if config.timeout_ms else None,
        cache_seconds=config.cache_seconds,
        cache_fields=_cache_fields(hook, config),
    )


def _cache_fields(hook: Any, config: HookConfig) -> tuple[str, ...] | None:
    """The payload fields ``hook`` reads with the config's params (its ``cache_fields``), which
    key its cached outcomes; None (the whole payload) when it names none or cannot say."""
    if not config.cache_seconds or not callable(getattr(hook, "cache_fields", None)):
        return None
    try:
        fields = hook.cache_fields(config.params)
        return None if fields is None else tuple(str(name) for name in fields)
    except Exception:
        logger.warning(
            "Hook config %s (%s): its cache_fields failed; keyed on the whole payload", config.pk, config.hook
        )
        return None


def build_pipeline(stash: Stash, version: int | None = None) -> pipeline.Pipeline:
    """A fresh pipeline of the stash's enabled hooks, in order, as its version ``config_version``
    recorded them (one query): exactly the hooks and params that the runs of that version name.
    A stash with no such version (older than versions) is built from its hook configs. Hooks with
    ``cache_seconds`` keep their outcomes in the shared cache, keyed on that version. ``version``:
    another version of the stash's (a run resumed with the version it began with)."""
    version = stash.config_version if version is None else version
    document = next(
        iter(
            PipelineVersion.objects.filter(stash_id=stash.pk, number=version)
            .order_by()
            .values_list("document", flat=True)
        ),
        None,
    )  # unique: no LIMIT
    if document is None:
        configs = list(HookConfig.objects.filter(stash_id=stash.pk).enabled().in_order())
        return pipeline.Pipeline([build_step(config, stash) for config in configs], cache=shared_cache, version=version)
    return document_pipeline(stash, document, cache=shared_cache, version=version)


def document_pipeline(
    stash: Stash, document: Mapping[str, Any], *, cache: Any = None, version: int = 0
) -> pipeline.Pipeline:
    """A pipeline of the enabled hooks of ``document`` (as a version records one: each hook with its
    config ``id``, or none for a hook not saved yet; in run order), with the stash's ``on_error`` it names."""
    stash = Stash(pk=stash.pk, slug=stash.slug, on_error=document["stash"].get("on_error", stash.on_error))
    configs = [
        # A field newer than the version has its default.
        HookConfig(pk=hook.get("id"), stash_id=stash.pk, **{name: hook[name] for name in HOOK_FIELDS if name in hook})
        for hook in document["hooks"]
        if hook["enabled"]
    ]
    return pipeline.Pipeline([build_step(config, stash) for config in configs], cache=cache, version=version)


def forget_cached() -> None:
    """Drop what this process keeps of stashes and their pipelines (read again on next use)."""
    _pipelines.clear()
    _priorities.clear()
    claiming.forget_stashes()


def pipeline_for(stash: Stash) -> pipeline.Pipeline:
    """The stash's pipeline, rebuilt only when its ``config_version`` has moved."""
    cached = _pipelines.get(stash.pk)
    if cached is not None and cached[0] == stash.config_version:
        return cached[1]
    built = build_pipeline(stash)
    _pipelines[stash.pk] = (stash.config_version, built)
    return built


def pipeline_at(stash: Stash, version: int) -> pipeline.Pipeline:
    """The stash's pipeline as its version ``version`` recorded it: ``pipeline_for`` when that is
    the current one."""
    if version == stash.config_version:
        return pipeline_for(stash)
    return build_pipeline(stash, version)


def priority_for(stash: Stash) -> Callable[[Mapping[str, Any]], float] | None:
    """The stash's ``review_priority`` compiled (None when blank or broken: logged), compiled again
    only when its ``config_version`` has moved (a change of the expression moves it)."""
    cached = _priorities.get(stash.pk)
    if cached is not None and cached[0] == stash.config_version:
        return cached[1]
    compiled = None
    if stash.review_priority.strip():
        try:
            compiled = compile_priority(stash.review_priority)
        except Exception:
            logger.warning("Review priority of stash %s cannot be compiled", stash.pk, exc_info=True)
    _priorities[stash.pk] = (stash.config_version, compiled)
    return compiled


def item_for(content: Content) -> pipeline.Item:
    return _item(
        content.stash.slug,
        content.pk,
        content.revision,
        content.payload,
        content.source,
        content.submitted_by_id,
        content.created_at,
        content.content_hash,
    )


def submitted_items(stash: Stash, ids: Iterable[Any]) -> dict[str, pipeline.Item]:
    """The items of ``stash`` among ``ids`` by id, each as ``item_for`` gives it but with the payload it
    was submitted with (``submitted_payload``): read as plain values, for runs that write nothing of
    the items (a shadow's), without the cost of model instances."""
    rows = Content.objects.filter(stash=stash, pk__in=list(ids)).values_list(
        "pk", "revision", "payload", "original_payload", "source", "submitted_by_id", "created_at", "content_hash"
    )
    return {
        str(pk): _item(stash.slug, pk, revision, payload if original is None else original, source, by, at, digest)
        for pk, revision, payload, original, source, by, at, digest in rows
    }


def _item(
    stash_slug: str,
    pk: Any,
    revision: int,
    payload: dict[str, Any],
    source: str,
    submitted_by_id: Any,
    created_at: Any,
    content_hash: str,
) -> pipeline.Item:
    return pipeline.Item(
        payload=payload,
        id=str(pk),
        stash=stash_slug,
        revision=revision,
        source=source,
        submitted_by=str(submitted_by_id) if submitted_by_id else None,
        created_at=created_at,
        content_hash=content_hash,
    )


def submitted_payload(content: Content) -> dict[str, Any]:
    """The payload ``content`` was submitted with: before the transforms that changed it, if any."""
    return content.payload if content.original_payload is None else content.original_payload
