"""Write the chaos figures into docs/RELIABILITY.md, between its markers; the rest is hand-written.

python -m tests.chaos.report docs/RELIABILITY.md var/chaos/embedded.json var/chaos/services.json
"""

import argparse
import datetime
import json
import sys
from pathlib import Path

START = "<!-- chaos-figures:start (written by `make chaos`; edit outside these markers) -->"
END = "<!-- chaos-figures:end -->"
BACKENDS = {
    "sqlite": "embedded (SQLite; filesystem broker, or our own Redis where the broker fails)",
    "postgresql": "services (PostgreSQL; Redis)",
}


def table(rows):
    lines = [
        (
            "| scenario | items | lost | judged twice | wrong verdicts | queue faults | recovery (s) "
            "| worker restarts | result |"
        ),
        "|---|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for row in rows:
        clean = not (row["lost"] or row["judged_twice"] or row["wrong"] or row["queue_faults"])
        result = "ok" if clean else "**fails**"
        if row.get("expected_failure"):
            result += f" (expected until fixed: {row['expected_failure']})"
        recovery = "–" if row["recovery_seconds"] is None else f"{row['recovery_seconds']:.1f}"
        lines.append(
            f"| {row['scenario']} | {row['items']} | {row['lost']} | {row['judged_twice']} | {row['wrong']} "
            f"| {row['queue_faults']} | {recovery} | {row.get('worker_restarts', 0)} | {result} |"
        )
    return lines


def section(figures, command, when):
    scales = sorted({row["scale"] for row in figures}) or ["none"]
    lines = [START, "", f"Last run: `{command}` on {when} (scale: {', '.join(scales)}).", ""]
    for backend, title in BACKENDS.items():
        rows = [row for row in figures if row["backend"] == backend]
        if rows:
            lines += [f"**{title}**", "", *table(rows), ""]
            measured = [row for row in rows if row.get("measured")]
            lines += [
                f"- {row['scenario']}: " + ", ".join(f"{name} {value}" for name, value in row["measured"].items())
                for row in measured
            ] + ([""] if measured else [])
    if not figures:
        lines += ["No figures: the run recorded none.", ""]
    return "\n".join([*lines, END])


def write(doc, figures, command, when):
    text = doc.read_text() if doc.exists() else ""
    new = section(figures, command, when)
    if START in text and END in text:
        before, rest = text.split(START, 1)
        text = before + new + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + new + "\n"
    doc.write_text(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("doc", type=Path)
    parser.add_argument("figures", nargs="*", type=Path, help="JSON files written with STASH_CHAOS_FIGURES")
    parser.add_argument("--command", default="make chaos")
    args = parser.parse_args(argv)
    figures = []
    for path in args.figures:
        if path.exists():
            figures += json.loads(path.read_text())
        else:
            print(f"chaos report: {path} is missing (that run recorded nothing)", file=sys.stderr)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    write(args.doc, figures, args.command, when)
    print(f"chaos report: {len(figures)} scenario runs written to {args.doc}")


if __name__ == "__main__":
    main()
