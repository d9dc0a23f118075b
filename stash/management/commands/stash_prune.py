"""Delete pipeline runs, and on request final items, older than their retention."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.management.progress import Progress

#: ``--items`` given without a number: the days come from the setting. (Not a string: argparse
#: would convert it with ``type``.)
FROM_SETTING = object()


class Command(BaseCommand):
    help = (
        "Delete pipeline runs older than STASH_RUN_RETENTION_DAYS (each item's latest run stays) and, "
        "with --items, accepted, rejected and failed items older than STASH_ITEM_RETENTION_DAYS."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, help="Run retention in days (default: STASH_RUN_RETENTION_DAYS).")
        parser.add_argument(
            "--items",
            nargs="?",
            type=int,
            const=FROM_SETTING,
            default=None,
            metavar="DAYS",
            help="Also delete final items processed more than DAYS days ago "
            "(default: STASH_ITEM_RETENTION_DAYS), with their runs.",
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=processing.PRUNE_BATCH_SIZE,
            help="Rows per batch, each deleted in a transaction of its own (default: %(default)s).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Only count what would be deleted.")

    def handle(self, *args, **options):
        item_days = options["items"]
        if item_days is FROM_SETTING:
            item_days = settings.STASH_ITEM_RETENTION_DAYS
            if item_days is None:
                raise CommandError("--items needs a number of days, or STASH_ITEM_RETENTION_DAYS set.")
        label = "prune (dry run)" if options["dry_run"] else "prune"
        try:
            with Progress(self.stderr, label, verbosity=options["verbosity"], unit="rows") as progress:
                report = processing.prune(
                    run_days=options["days"],
                    item_days=item_days,
                    batch_size=options["batch_size"],
                    dry_run=options["dry_run"],
                    on_batch=lambda so_far: progress.update(so_far.runs + so_far.items + so_far.item_runs),
                )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        verb = "Would delete" if report.dry_run else "Deleted"
        self.stdout.write(
            f"{verb} {report.runs:,} pipeline run(s) finished before "
            f"{report.run_cutoff:%Y-%m-%d %H:%M} UTC (each item's latest run kept)."
        )
        if report.item_cutoff is not None:
            self.stdout.write(
                f"{verb} {report.items:,} accepted, rejected or failed item(s) processed before "
                f"{report.item_cutoff:%Y-%m-%d %H:%M} UTC, with their {report.item_runs:,} run(s)."
            )
