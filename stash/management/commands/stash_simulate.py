"""Run a stash's hooks over a payload and print the per-hook trail; nothing is saved."""

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from stash import processing
from stash.management.documents import read_json
from stash.models import Stash


class Command(BaseCommand):
    help = "Show what a stash's hooks would do with a payload (a JSON file, or - for stdin). Saves nothing."

    def add_arguments(self, parser):
        parser.add_argument("stash", help="Slug of the stash.")
        parser.add_argument("payload", help="Path of a JSON file holding the payload object, or - for stdin.")
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="Run every enabled hook, even after the one that decides (marked), and print "
            "the payload after each transform. The verdict is the same.",
        )

    def handle(self, *args, **options):
        stash = Stash.objects.filter(slug=options["stash"]).first()
        if stash is None:
            raise CommandError(f"No stash with slug {options['stash']!r}.")
        payload = read_payload(options["payload"])
        try:
            result = processing.simulate(stash, payload, verbose=options["verbose"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        except processing.Unanswered as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), indent=2))
            return
        for entry in result.trail:
            name = entry.title
            line = f"{entry.position:>3}  {name:<24} {entry.outcome:<11} {entry.duration_ms:8.3f} ms  {entry.message}"
            if result.verbose and (entry.stopped or entry.after_stop):
                line = line.rstrip() + (
                    "  [decided the run]" if entry.stopped else "  [after the verdict: ran for --verbose only]"
                )
            self.stdout.write(line)
            if entry.payload is not None:
                self.stdout.write(f"     payload: {json.dumps(entry.payload, ensure_ascii=False)}")
        verdict = f"verdict: {result.verdict}" + (f" ({result.reason})" if result.reason else "")
        self.stdout.write(self.style.SUCCESS(verdict) if result.verdict == "accepted" else self.style.WARNING(verdict))


def read_payload(source):
    """The JSON object in file ``source`` (or stdin for ``-``); ``CommandError`` if it is not one."""
    payload = read_json(source, "payload")
    if not isinstance(payload, dict):
        raise CommandError(f"The payload must be a JSON object, not {type(payload).__name__}.")
    return payload
