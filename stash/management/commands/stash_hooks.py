"""List the registered hooks: name, kind and description."""

import json

from django.core.management.base import BaseCommand

from stash.core import registry


class Command(BaseCommand):
    help = "List every registered hook with its kind and one-line description."

    def add_arguments(self, parser):
        parser.add_argument(
            "--json", action="store_true", help="Print name, kind, description and params schema as JSON."
        )

    def handle(self, *args, **options):
        hooks = registry.all()
        if options["json"]:
            rows = [
                {"name": h.name, "kind": h.kind, "description": h.description(), "params_schema": h.params_schema}
                for h in hooks
            ]
            self.stdout.write(json.dumps(rows, indent=2))
            return
        width = max((len(h.name) for h in hooks), default=4)
        for hook in hooks:
            self.stdout.write(f"{hook.name:<{width}}  {hook.kind:<9}  {hook.description()}")
        for source, message in registry.load_errors:
            self.stderr.write(f"could not load hooks from {source}: {message}")
