"""The instructors' index of every exercise: one table per part, each row linked to its exercise.

Computed from the registry alone, so the appendix page "Exercises, for instructors" lists exactly the exercises that
exist, and it is just as complete from an installed wheel as from a clone. The links are plain Markdown links to a
label, ``[dot.1](#ex-dot-1)``: MyST resolves them across the book, and the readers' notebooks point them at the
chapter's notebook, so they read right in both. The package never reads the book: the page that shows the index
passes in the anchors its chapters define (and their titles), and an exercise whose anchor is not among them is
listed without a link, so that no link on the page can dangle.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import all_exercises

PARTS = (("Part I: ideas, with real numbers", "0"), ("Part II: one training step of a small GPT", "12"),
         ("Part III: the 2017 encoder–decoder by hand", "3"), ("Part IV and the appendix", "4"))
STARS = {1: "★", 2: "★★", 3: "★★★"}


@dataclass(frozen=True)
class ExerciseIndex:
    markdown: str
    count: int

    def _repr_markdown_(self) -> str:
        return self.markdown

    def __repr__(self) -> str:
        return f"{self.count} exercises"


def exercise_index(anchors=None, chapters=None) -> ExerciseIndex:
    """Markdown tables of every registered exercise, grouped by part: chapter, link, kind, difficulty and task.

    ``anchors`` is the collection of labels the chapters define (``{"ex-dot-1", ...}``); each exercise whose anchor
    is in it is linked, the others are listed by key alone. ``None`` links every exercise. ``chapters`` maps a
    chapter's file name to ``(label, title)`` (``{"01_dot_products": ("ch-dot-products", "Dot products")}``), so the
    chapter column links its title; a chapter not in it is named by its file name.
    """
    if anchors is not None:
        if isinstance(anchors, str) or not all(isinstance(a, str) for a in anchors):
            raise ValueError(f"anchors must be a collection of label strings such as 'ex-dot-1', got {anchors!r}")
        anchors = frozenset(anchors)
    chapters = {} if chapters is None else chapters
    if not isinstance(chapters, dict) or not all(isinstance(v, tuple) and len(v) == 2 for v in chapters.values()):
        raise ValueError(f"chapters must map a chapter's file name to (label, title), got {chapters!r}")
    exs = all_exercises()
    lines = []
    for title, leads in PARTS:
        rows = [e for e in exs if e.chapter[0] in leads]
        if not rows:
            continue
        lines += [f"## {title}", "", "| chapter | exercise | kind | difficulty | task |", "|---|---|---|---|---|"]
        for e in rows:
            link = f"[{e.key}](#{e.anchor})" if anchors is None or e.anchor in anchors else e.key
            label, name = chapters.get(e.chapter, (None, e.chapter))
            chapter = f"[{name}](#{label})" if label else name
            lines.append(f"| {chapter} | {link} | {e.kind} | {STARS[e.level]} | {e.prompt} |")
        lines.append("")
    # in a <div> of its own (blank lines around the Markdown, so that it is parsed inside the HTML block): the book's
    # CSS stacks each row as a card at phone width, where five columns do not fit side by side
    return ExerciseIndex('<div class="byhand-exercise-index">\n\n' + "\n".join(lines) + "\n</div>", len(exs))
