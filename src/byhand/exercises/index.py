"""The instructors' index of every exercise: one table per part, each row linked to its exercise.

Computed from the registry, so the appendix page "Exercises, for instructors" lists exactly the exercises that
exist. The links are MyST ``{ref}`` roles to each exercise's anchor (``ex-dot-1``), which the chapters define.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import all_exercises

PARTS = (("Part I: ideas, with real numbers", "0"), ("Part II: one training step of a small GPT", "12"),
         ("Part III: the 2017 encoder–decoder by hand", "3"), ("Part IV and the appendix", "4"))
STARS = {1: "★", 2: "★★", 3: "★★★"}


def _anchored(e) -> bool:
    """Whether the exercise's chapter defines its anchor yet, so that every link on the index resolves."""
    from pathlib import Path

    nb = Path(__file__).resolve().parents[3] / "book" / f"{e.chapter}.ipynb"
    return nb.exists() and f"({e.anchor})=" in nb.read_text(encoding="utf-8")


@dataclass(frozen=True)
class ExerciseIndex:
    markdown: str
    count: int

    def _repr_markdown_(self) -> str:
        return self.markdown

    def __repr__(self) -> str:
        return f"{self.count} exercises"


def exercise_index() -> ExerciseIndex:
    """Markdown tables of every exercise, grouped by part, with chapter, link, kind, difficulty and task."""
    exs = [e for e in all_exercises() if _anchored(e)]
    lines = []
    for title, leads in PARTS:
        rows = [e for e in exs if e.chapter[0] in leads]
        if not rows:
            continue
        lines += [f"## {title}", "", "| chapter | exercise | kind | difficulty | task |", "|---|---|---|---|---|"]
        lines += [f"| {{doc}}`{e.chapter}` | {{ref}}`{e.key} <{e.anchor}>` | {e.kind} | {STARS[e.level]} | {e.prompt} |"
                  for e in rows]
        lines.append("")
    return ExerciseIndex("\n".join(lines), len(exs))
