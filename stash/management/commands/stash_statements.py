"""Write the statements of reasons, as JSON Lines or as the DSA Transparency Database takes them."""

import json

from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.models import Stash


class Command(BaseCommand):
    help = (
        "Write the statements of reasons, oldest first, one a line: stash's own fields (jsonl) or the "
        "DSA Transparency Database's statement fields and enum keys (dsa)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--stash", metavar="SLUG", help="Only the statements of this stash.")
        parser.add_argument("--since", metavar="DATE", help="Only statements decided on or after DATE (YYYY-MM-DD).")
        parser.add_argument("--format", default="jsonl", help="jsonl (default) or dsa.")

    def handle(self, *args, **options):
        fmt = options["format"]
        if fmt not in ("jsonl", "dsa"):
            raise CommandError(f"--format must be dsa or jsonl, not {fmt!r}.")
        stash = None
        if options["stash"] is not None:
            stash = Stash.objects.filter(slug=options["stash"]).first()
            if stash is None:
                raise CommandError(f"No stash with slug {options['stash']!r}.")
        since = None
        if options["since"] is not None:
            try:
                since = processing.statements.parse_since(options["since"])
            except ValueError as exc:
                raise CommandError(f"--since must be a date (YYYY-MM-DD), not {options['since']!r}.") from exc
        for row in processing.statements.export_rows(stash, since, fmt):
            self.stdout.write(json.dumps(row, ensure_ascii=False, sort_keys=True))
