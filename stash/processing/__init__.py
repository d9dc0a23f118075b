"""The one Django-side path: every face (task, admin, API, form, command) calls these functions, so the
rules live here once. Locks are always taken in one order: items, then stashes (by id), then hook configs.

- ``submitting``: what people and programs send (``submit``, ``submit_many``, ``edit_payload``); reading a queue.
- ``claiming``: the compare-and-set that takes a batch of items for a message.
- ``building``: a stash's pipeline as its current version recorded it, built once per version.
- ``judging``: ``judge`` runs a batch through its pipeline and writes the verdicts; live before bulk.
- ``callbacks``, ``resuming``: asynchronous hooks: the service's answer at its callback, the run's resume.
- ``after_verdict``: what judging and reviewing both do once a verdict is decided (counters, queue, sinks).
- ``time_limits``: a message's ``Clock``: its hard time limit, its leases, which items fit in it.
- ``recovering``: a message stopped at its time limit: its items taken over, a hook that hung timed out.
- ``sweeping``: the sweeper's pass over lost messages, dead workers and items out of attempts.
- ``rejudging``: ``reprocess``, judging again, leaving out what people decided unless told otherwise;
  ``rejudging_progress``: how far judging again many items has come.
- ``delivering``: ``deliver``, one sink for one verdict; ``delivery_slots``: how many at once per hook.
- ``feedback``: a person's decision on an item a hook decided, sent to that hook's ``feedback``.
- ``precision``, ``auto_observe``: how often people agreed with a hook's verdicts; a hook under its
  ``min_precision`` switched to observe.
- ``slowness``, ``slots``, ``cache_slots``: a slow stash's share of the judging processes.
- ``child_process``: hooks run where a hang cannot hold the caller (simulate, replay, examples).
- ``simulating``: a stash's hooks, or a draft, over a payload or an item; nothing saved.
- ``shadows``, ``shadow_runs``, ``shadow_reports``: a draft or a version judged beside the live pipeline
  on a share of live saves, its sinks off; what it found; promoting it.
- ``reviewing``: a person's decisions on items, the held items awaiting them, replay.
- ``statements``: the statement of reasons of each rejected or held item, from its stash's policy.
- ``appeals``: a submitter's appeal of a rejection (DSA Art. 20) and a second person's decision on it.
- ``reviewing``: a person's decisions on items (four eyes included), the count of held items, replay.
- ``review_queue``: the team's queue: its order, claims, deadlines, the four-eyes state, priorities.
- ``expiring``: held items past their stash's time, decided automatically.
- ``ordering``, ``configuring``: the admin's and the API's changes to hook configs, under the stash's lock.
- ``importing``, ``versions``: a stash's pipeline as a document; the versions every change records.
- ``examples``, ``guarding``: golden examples, and the guard that keeps a change only if they allow it.
- ``limits``: how big a stash may grow.
- ``housekeeping``, ``exporting``: pruning past retention; a stash's items as JSON Lines.
- ``failures``, ``redriving``: the failure store (hook errors, timeouts, items given up on, by group);
  judging a group again.
- ``stats``, ``activity``, ``worker_counts``: per-hook counters and times, the last 24 hours, worker counts.
"""

from stash.db import publishing
from stash.db.versioning import one_change
from stash.models.backpressure import check_room
from stash.processing import failures, redriving, statements
from stash.processing.activity import Unsupported as ActivityUnsupported, for_stash as hook_activity
from stash.processing.appeals import (
    OUTCOMES as APPEAL_OUTCOMES,
    SUBMITTED_SESSION_KEY,
    AppealConflict,
    AppealRefused,
    AppealTooLate,
    InvalidStatement,
    NotAppealable,
    NotYourAppealToDecide,
    appeal,
    appeal_of,
    appealable,
    appeals_of,
    deadline as appeal_deadline,
    decide_appeal,
    may_appeal,
    may_decide,
    open_appeal_count,
    open_appeals,
    refusal as appeal_refusal,
)
from stash.processing.auto_observe import check as check_precision, notice as auto_observed_notice
from stash.processing.building import build_pipeline, build_step, forget_cached, item_for, pipeline_for
from stash.processing.child_process import ChildFailed, DeadlineExceeded, Unanswered
from stash.processing.configuring import (
    delete_hooks,
    duplicate_hooks,
    merge_secrets,
    save_hook,
    saving_hooks,
    set_enabled,
)
from stash.processing.delivering import DeliveryError, deliver, for_item as deliveries_of, send as send_deliveries
from stash.processing.delivery_slots import SlotsTaken, delivery_slot
from stash.processing.examples import (
    ExampleResult,
    ExamplesBroken,
    compare_examples,
    decider_title,
    example_from,
    run_examples,
)
from stash.processing.expiring import ExpiryReport, expire_reviews
from stash.processing.exporting import export_count, export_rows, write_jsonl
from stash.processing.feedback import FeedbackError, give as give_feedback
from stash.processing.guarding import CheckedChange, PipelineChanged, run_checked
from stash.processing.housekeeping import BATCH_SIZE as PRUNE_BATCH_SIZE, PruneReport, prune, scheduled_prune
from stash.processing.importing import (
    EXAMPLES_PERMISSIONS,
    PIPELINE_PERMISSIONS,
    ImportPlan,
    InvalidDocument,
    draft_document,
    examples_to_run,
    export_document,
    import_document,
    import_permissions,
    missing_import_permissions,
    public_document,
)
from stash.processing.judging import BULK_SLICE, BatchReport, judge
from stash.processing.ordering import arrange_hooks, move_hooks, place_dragged_hooks, place_hooks, reorder_hooks
from stash.processing.payload_schemas import payload_schema
from stash.processing.precision import Precision, for_configs as hook_precision
from stash.processing.recovering import recover, token_for
from stash.processing.rejudging import PeoplesDecisions, decided_by_people, reprocess, reprocess_by_stash
from stash.processing.rejudging_progress import JudgingProgress, judging_progress
from stash.processing.resuming import resume
from stash.processing.review_queue import (
    Claim,
    QueueRow,
    claim,
    claim_minutes,
    first_approvals,
    held_by_other,
    held_items,
    holder_message,
    is_overdue,
    later_than as after_in_queue,
    needs_two,
    next_for,
    next_held,
    oldest_held,
    overdue_counts,
    position as queue_position,
    queue_rows,
    reason_codes,
    release,
    reprioritize,
    reviewable_stashes,
)
from stash.processing.reviewing import (
    APPROVED_ALREADY,
    CLAIMED,
    DECIDED_STATUSES,
    DECISIONS,
    WAITING_REFUSAL,
    DecisionOutcome,
    ReplayChange,
    ReplayReport,
    approve,
    decide,
    decide_automatically,
    decisions_for,
    held_counts,
    overturn,
    reject,
    replay,
    with_held_counts,
)
from stash.processing.shadow_reports import described as described_shadow, report as shadow_report
from stash.processing.shadow_runs import (
    finish_expired as finish_expired_shadows,
    record_gathered as record_gathered_shadow_runs,
    run as run_shadow,
)
from stash.processing.shadows import (
    MAX_COUNT as SHADOW_MAX_COUNT,
    MAX_MINUTES as SHADOW_MAX_MINUTES,
    ShadowConflict,
    promote as promote_shadow,
    running_shadow,
    shadows_of,
    start as start_shadow,
    stop as stop_shadow,
)
from stash.processing.simulating import CONTENT_FIELD, drafted_hooks, simulate, simulation_item
from stash.processing.slots import Slot, judging_slot
from stash.processing.slowness import mark_stopped, slow_stashes
from stash.processing.submitting import (
    BULK_LIMIT,
    InvalidItems,
    check_key,
    check_payload,
    edit_payload,
    may_submit,
    queue_page,
    submission_stash,
    submit,
    submit_item,
    submit_many,
    submittable_stashes,
    visible_contents,
)
from stash.processing.sweeping import SweepReport, sweep
from stash.processing.time_limits import Clock
from stash.processing.versions import (
    VersionDiff,
    compare as compare_versions,
    plan_diff,
    restore,
    shown as shown_version,
)
from stash.processing.worker_counts import count_sweep

__all__ = [
    "failures",
    "redriving",
    "statements",
    "APPEAL_OUTCOMES",
    "SUBMITTED_SESSION_KEY",
    "AppealConflict",
    "AppealRefused",
    "AppealTooLate",
    "InvalidStatement",
    "NotAppealable",
    "NotYourAppealToDecide",
    "appeal",
    "appeal_of",
    "appealable",
    "appeals_of",
    "decide_appeal",
    "appeal_deadline",
    "may_appeal",
    "may_decide",
    "open_appeal_count",
    "open_appeals",
    "appeal_refusal",
    "after_in_queue",
    "claim_minutes",
    "holder_message",
    "Claim",
    "claim",
    "first_approvals",
    "held_by_other",
    "is_overdue",
    "needs_two",
    "next_for",
    "oldest_held",
    "overdue_counts",
    "queue_position",
    "queue_rows",
    "QueueRow",
    "reason_codes",
    "release",
    "reprioritize",
    "reviewable_stashes",
    "APPROVED_ALREADY",
    "CLAIMED",
    "decide_automatically",
    "ExpiryReport",
    "expire_reviews",
    "EXAMPLES_PERMISSIONS",
    "PIPELINE_PERMISSIONS",
    "ActivityUnsupported",
    "approve",
    "arrange_hooks",
    "BatchReport",
    "build_pipeline",
    "build_step",
    "BULK_LIMIT",
    "BULK_SLICE",
    "check_key",
    "check_room",
    "check_payload",
    "CheckedChange",
    "ChildFailed",
    "Clock",
    "compare_examples",
    "compare_versions",
    "plan_diff",
    "CONTENT_FIELD",
    "count_sweep",
    "DeadlineExceeded",
    "decide",
    "decided_by_people",
    "DECIDED_STATUSES",
    "WAITING_REFUSAL",
    "decider_title",
    "DecisionOutcome",
    "DECISIONS",
    "decisions_for",
    "delete_hooks",
    "deliver",
    "send_deliveries",
    "deliveries_of",
    "delivery_slot",
    "DeliveryError",
    "FeedbackError",
    "give_feedback",
    "check_precision",
    "auto_observed_notice",
    "hook_precision",
    "Precision",
    "draft_document",
    "drafted_hooks",
    "duplicate_hooks",
    "edit_payload",
    "example_from",
    "ExampleResult",
    "ExamplesBroken",
    "examples_to_run",
    "export_document",
    "export_count",
    "export_rows",
    "forget_cached",
    "held_counts",
    "held_items",
    "hook_activity",
    "import_document",
    "import_permissions",
    "ImportPlan",
    "InvalidDocument",
    "InvalidItems",
    "item_for",
    "judge",
    "resume",
    "judging_slot",
    "mark_stopped",
    "may_submit",
    "merge_secrets",
    "missing_import_permissions",
    "move_hooks",
    "next_held",
    "one_change",
    "overturn",
    "PeoplesDecisions",
    "payload_schema",
    "pipeline_for",
    "PipelineChanged",
    "place_dragged_hooks",
    "place_hooks",
    "prune",
    "PRUNE_BATCH_SIZE",
    "PruneReport",
    "public_document",
    "publishing",
    "queue_page",
    "recover",
    "reject",
    "reorder_hooks",
    "replay",
    "ReplayChange",
    "ReplayReport",
    "reprocess",
    "reprocess_by_stash",
    "JudgingProgress",
    "judging_progress",
    "restore",
    "run_checked",
    "run_examples",
    "save_hook",
    "saving_hooks",
    "scheduled_prune",
    "set_enabled",
    "shown_version",
    "described_shadow",
    "finish_expired_shadows",
    "promote_shadow",
    "run_shadow",
    "record_gathered_shadow_runs",
    "running_shadow",
    "shadow_report",
    "SHADOW_MAX_COUNT",
    "SHADOW_MAX_MINUTES",
    "ShadowConflict",
    "shadows_of",
    "start_shadow",
    "stop_shadow",
    "simulate",
    "simulation_item",
    "Slot",
    "SlotsTaken",
    "slow_stashes",
    "submission_stash",
    "submit",
    "submit_item",
    "submit_many",
    "submittable_stashes",
    "sweep",
    "SweepReport",
    "token_for",
    "Unanswered",
    "VersionDiff",
    "visible_contents",
    "with_held_counts",
    "write_jsonl",
]
