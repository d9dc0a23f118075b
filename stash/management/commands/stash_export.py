"""Write a stash's items as JSON Lines, for systems downstream."""

from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.management.progress import Progress
from stash.models import Content, Stash


class Command(BaseCommand):
    help = (
        "Write a stash's items as JSON Lines (one object a line), accepted ones in queue order, "
        "others in order of creation."
    )

    def add_arguments(self, parser):
        parser.add_argument("stash", help="Slug of the stash.")
        parser.add_argument(
            "--status",
            action="append",
            choices=Content.Status.values,
            help="Only items with this status (repeatable; default: all).",
        )
        parser.add_argument(
            "--after",
            type=int,
            metavar="N",
            help="Only accepted items after queue number N (implies --status accepted).",
        )
        parser.add_argument("--output", "-o", metavar="FILE", help="Write to FILE instead of standard output.")

    def handle(self, *args, **options):
        stash = Stash.objects.filter(slug=options["stash"]).first()
        if stash is None:
            raise CommandError(f"No stash with slug {options['stash']!r}.")
        statuses, after = options["status"], options["after"]
        if after is not None:
            if after < 0:
                raise CommandError(f"--after must be 0 or more, not {after}.")
            statuses = statuses or [Content.Status.ACCEPTED]
            if set(statuses) != {Content.Status.ACCEPTED}:
                raise CommandError("--after is a queue number: use it with --status accepted alone.")
        rows = processing.export_rows(stash, statuses=statuses, after=after)
        total = processing.export_count(stash, statuses=statuses, after=after)
        # On standard error: standard output may be the items themselves. Items scrolling on a
        # terminal are their own progress: a bar would be drawn through them.
        verbosity = 0 if options["output"] is None and self.stdout.isatty() else options["verbosity"]
        with Progress(self.stderr, f"export {stash.slug}", total, verbosity) as progress:
            if options["output"] is None:
                processing.write_jsonl(progress.wrap(rows), self.stdout)
                return
            try:
                with open(options["output"], "w", encoding="utf-8") as out:
                    count = processing.write_jsonl(progress.wrap(rows), out)
            except OSError as exc:
                raise CommandError(f"Cannot write {options['output']}: {exc.strerror or exc}.") from exc
        self.stdout.write(f"{count:,} item(s) of {stash.slug} written to {options['output']}.")
