"""Stashes, their configured hooks, submitted content and the runs that judged it: one module per area."""

from stash.models import backpressure
from stash.models.base import LoadedStateModel
from stash.models.callbacks import Callback
from stash.models.choices import ExamplesPolicy, ExpireAction, HookOnError, OnError
from stash.models.content import WAITING_STATUSES, Content, ContentQuerySet, id_prefix_bounds, lease_end
from stash.models.deliveries import Delivery
from stash.models.failures import Failure, group_key
from stash.models.history import EventCount, Example, PipelineRun, PipelineVersion, Review, asynchronous_titles
from stash.models.hooks import HookConfig, HookConfigQuerySet
from stash.models.moderation import APPEAL_TEXT_MAX, Appeal, Statement
from stash.models.shadows import Shadow, ShadowRun
from stash.models.stashes import Stash
from stash.models.validators import (
    MAX_INTEGER_DIGITS,
    MAX_PAYLOAD_DEPTH,
    QUEUE_NAME_MAX,
    SERVICE_OUTCOMES,
    canonical_json,
    content_hash,
    unstorable,
    validate_payload,
    validate_queue_name,
    validate_reason_codes,
    validate_review_priority,
    validate_service_answers,
    validate_statement_policy,
)

__all__ = [
    "WAITING_STATUSES",
    "APPEAL_TEXT_MAX",
    "Appeal",
    "asynchronous_titles",
    "backpressure",
    "Callback",
    "canonical_json",
    "Content",
    "content_hash",
    "ContentQuerySet",
    "Delivery",
    "EventCount",
    "Example",
    "Failure",
    "ExamplesPolicy",
    "ExpireAction",
    "group_key",
    "HookConfig",
    "HookConfigQuerySet",
    "HookOnError",
    "id_prefix_bounds",
    "lease_end",
    "LoadedStateModel",
    "MAX_INTEGER_DIGITS",
    "MAX_PAYLOAD_DEPTH",
    "OnError",
    "PipelineRun",
    "PipelineVersion",
    "QUEUE_NAME_MAX",
    "Review",
    "SERVICE_OUTCOMES",
    "Shadow",
    "ShadowRun",
    "Stash",
    "Statement",
    "unstorable",
    "validate_payload",
    "validate_queue_name",
    "validate_reason_codes",
    "validate_review_priority",
    "validate_service_answers",
    "validate_statement_policy",
]
