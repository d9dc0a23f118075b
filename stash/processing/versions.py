"""A stash's pipeline versions: every change kept (``PipelineVersion``, written by each change's
``one_change``), told apart, and restored.

    diff = compare(stash, 3, 5)          # diff.changes: ["No spam disabled"], diff.lines: unified diff
    lines = plan_diff(stash, import_document(stash, document, dry_run=True), "pipeline.json")
    plan = restore(stash, 3)             # version 3's hooks and settings again, as a new version
    run.version.document                 # the hooks and params that judged a run
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from stash.core import documents
from stash.models import PipelineVersion, Stash
from stash.processing.importing import ImportPlan, import_document, public_document


@dataclass(frozen=True)
class VersionDiff:
    """What changed from version ``old`` to version ``new`` of a stash."""

    old: PipelineVersion
    new: PipelineVersion
    changes: list[str]
    lines: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"from": self.old.number, "to": self.new.number, "changes": self.changes, "diff": "\n".join(self.lines)}


def shown(version: PipelineVersion) -> dict[str, Any]:
    """A version's document as anyone may see it (no secrets, no config ids)."""
    return public_document(version.document)


def compare(stash: Stash, old: int, new: int) -> VersionDiff:
    """The difference between versions ``old`` and ``new`` of ``stash`` (either may be the later);
    ``PipelineVersion.DoesNotExist`` naming the missing one."""
    versions = {version.number: version for version in stash.versions.filter(number__in=[old, new])}
    for number in (old, new):
        if number not in versions:
            raise PipelineVersion.DoesNotExist(
                _("%(stash)s has no version %(number)d.") % {"stash": stash.slug, "number": number}
            )
    before, after = versions[old], versions[new]
    return VersionDiff(
        old=before,
        new=after,
        changes=documents.changes(before.document, after.document),
        lines=diff_lines(before.document, after.document, f"version {old}", f"version {new}"),
    )


def diff_lines(before: dict[str, Any], after: dict[str, Any], old_name: str, new_name: str) -> list[str]:
    """A unified diff of two recorded documents as anyone may see them (``shown``: no secrets, no ids)."""
    return documents.diff_lines(public_document(before), public_document(after), old_name, new_name)


def plan_diff(stash: Stash, plan: ImportPlan, name: str) -> list[str]:
    """The unified diff of what importing the file ``name`` would do to ``stash`` (``plan``, a dry
    run's), from its current version to the file, as two versions are compared (``compare``)."""
    if plan.documents is None:
        return []
    before, after = plan.documents
    return diff_lines(before, after, f"version {stash.config_version}", name)


def restore(stash: Stash, number: int) -> ImportPlan:
    """Make ``stash``'s pipeline what version ``number`` was, as a new version (its examples stay,
    and run first: see ``import_document``). ``PipelineVersion.DoesNotExist`` if there is none."""
    try:
        version = stash.versions.get(number=number)
    except PipelineVersion.DoesNotExist:
        raise PipelineVersion.DoesNotExist(
            _("%(stash)s has no version %(number)d.") % {"stash": stash.slug, "number": number}
        ) from None
    return import_document(stash, version.document, note=_("restore of version %(number)d") % {"number": number})
