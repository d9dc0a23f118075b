"""Send items to be judged again by their stash's current hooks."""

import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from stash import processing
from stash.management.progress import Progress, working
from stash.models import Content, Stash

#: Seconds between two counts of the verdicts, with --wait.
POLL = 1.0
#: Ids in one count query (SQLite takes a bounded number of parameters).
IDS_PER_QUERY = 5000


class Command(BaseCommand):
    help = "Judge items again: by id, by stash and/or by status, or a group of the failure store."

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", help="Ids of items.")
        parser.add_argument("--stash", help="Slug of a stash: its items.")
        parser.add_argument(
            "--status", action="append", choices=Content.Status.values, help="Only items with this status (repeatable)."
        )
        parser.add_argument(
            "--failure-group",
            metavar="KEY",
            help="The items of this group of the failure store (its key, from the admin's Failures page or "
            "GET /api/failures/): re-driven on the current pipeline.",
        )
        parser.add_argument(
            "--include-reviewed",
            action="store_true",
            help="Also items whose status a person's decision gave: their decisions are "
            "replaced (kept in each item's history). Left out by default.",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="Stay until every item sent has its new verdict, counting the verdicts on standard error "
            "(Ctrl-C stops waiting; the items are judged all the same).",
        )

    def handle(self, *args, **options):
        if options["failure_group"]:
            if options["ids"] or options["stash"] or options["status"]:
                raise CommandError("--failure-group names its items: give no ids, --stash or --status with it.")
            return self.redrive(options["failure_group"], options["include_reviewed"], options)
        if not (options["ids"] or options["stash"] or options["status"]):
            raise CommandError("Say which items: ids, --stash and/or --status, or --failure-group.")
        items = Content.objects.all()
        if options["stash"]:
            if not Stash.objects.filter(slug=options["stash"]).exists():
                raise CommandError(f"No stash with slug {options['stash']!r}.")
            items = items.filter(stash__slug=options["stash"])
        if options["status"]:
            items = items.filter(status__in=options["status"])
        if options["ids"]:
            try:
                # Compared as UUIDs: an id in upper case or without dashes names the same item.
                wanted = {Content._meta.pk.to_python(pk): pk for pk in options["ids"]}
            except ValidationError as exc:
                raise CommandError(f"Not an item id: {'; '.join(exc.messages)}") from exc
            items = items.filter(pk__in=list(wanted))
            missing = set(wanted) - set(items.values_list("pk", flat=True))
            if missing:
                raise CommandError(f"No such item(s): {', '.join(sorted(wanted[pk] for pk in missing))}.")
        people = processing.decided_by_people(items)
        ids, started = list(items.values_list("pk", flat=True)) if options["wait"] else [], timezone.now()
        with working(self.stderr, "sending the items to be judged again", options["verbosity"]):
            count = processing.reprocess(items, include_reviewed=options["include_reviewed"])
        self.report(count, people, options["include_reviewed"])
        if options["wait"] and count:
            self.wait(ids, count, started, options["verbosity"])

    def redrive(self, key, include_reviewed, options):
        group = processing.failures.group(key)
        if group is None:
            raise CommandError(f"No group of failures {key!r}.")
        ids, started = (
            list(processing.failures.items_of(key).values_list("pk", flat=True)) if options["wait"] else [],
            timezone.now(),
        )
        with working(self.stderr, "sending the items to be judged again", options["verbosity"]):
            done = processing.redriving.redrive(key, include_reviewed=include_reviewed)
        self.stdout.write(
            f"Failures of {group.label or group.hook or 'no hook'} ({group.error_type}, version "
            f"{group.config_version}) in {group.stash.slug}: {group.items} item(s)."
        )
        self.report(done.sent, done.people, include_reviewed)
        if options["wait"] and done.sent:
            self.wait(ids, done.sent, started, options["verbosity"])

    def wait(self, ids, count, started, verbosity):
        """Count the verdicts given since ``started`` to the ``count`` items sent of ``ids`` until
        all have one."""
        decided = 0
        try:
            with Progress(self.stderr, "judged again", count, verbosity) as progress:
                while decided < count:
                    time.sleep(POLL)
                    decided = sum(
                        Content.objects.filter(
                            pk__in=ids[start : start + IDS_PER_QUERY],
                            status__in=processing.DECIDED_STATUSES,
                            processed_at__gte=started,
                        ).count()
                        for start in range(0, len(ids), IDS_PER_QUERY)
                    )
                    progress.update(decided)
        except KeyboardInterrupt:
            self.stdout.write(f"Stopped waiting: {decided} of {count} item(s) judged so far.")
            return
        self.stdout.write(f"All {count} item(s) judged again.")

    def report(self, count, people, included):
        self.stdout.write(f"{count} item(s) sent to be judged again.")
        if people and included:
            self.stdout.write(
                f"{people.count} of them decided by people ({people.who()}): their decisions "
                "are replaced, kept in each item's history."
            )
        elif people:
            self.stdout.write(
                f"{people.count} item(s) left out: decided by people ({people.who()}). "
                "--include-reviewed judges them again too, replacing their decisions."
            )
