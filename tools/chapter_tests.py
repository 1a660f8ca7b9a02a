"""Check one chapter: `make test CHAPTER=13` (a number or a name; several: CHAPTER="13 14").

For each chapter it runs, in one pytest call:
- its readers' notebook under nbval (`notebooks/NN_topic.ipynb`): the chapter re-run and compared;
- the tests of every view the chapter imports (`byhand.views.X` -> `tests/test_views_X.py`), and that view's cases
  in the shared frame and move tests;
- its exercises: their checks, their pinned answers and their code references.
The view and exercise cases of the shared test files are picked by their test ids (`-k`), so nothing is listed twice
and nothing is copied here: the chapter's source says which views it uses, the exercise registry which exercises.

    python tools/chapter_tests.py 13 [-- extra pytest options]
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from outputs import resolve  # noqa: E402  (the same chapter names `make outputs CHAPTER=` takes)

SHARED = ["tests/test_view_frames.py", "tests/test_view_moves.py", "tests/test_exercises.py",
          "tests/test_exercise_answers.py", "tests/test_plain_pins.py"]


def plan(names: list[str]) -> tuple[list[str], list[str]]:
    """(files to run whole, ids to pick from the shared files) for the chapters named."""
    from byhand.exercises import all_exercises

    files, ids = [], []
    for path in resolve(names):
        files.append(f"notebooks/{path.stem}.ipynb")
        source = path.read_text(encoding="utf-8")
        for view in sorted(set(re.findall(r"byhand\.views\.([a-z_]+)", source))):
            if (ROOT / "tests" / f"test_views_{view}.py").exists():
                files.append(f"tests/test_views_{view}.py")
            ids.append(view if view != "nudge" else f"nudge-chapter{path.stem[:2]}")
        ids += [e.key for e in all_exercises() if e.chapter == path.stem]
    return files, ids


def main(argv: list[str]) -> int:
    names, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    if not names:
        raise SystemExit("name a chapter: make test CHAPTER=13")
    files, ids = plan(names)
    pytest = [sys.executable, "-m", "pytest", "-q", "--ignore=tests/oracle", *extra]
    # shared files: exactly the parametrized cases whose id is the chapter's view or exercise ("[scores]", "[scores.1]")
    selected = subprocess.run(pytest[:3] + ["--collect-only", "-q", *SHARED], cwd=ROOT,
                              capture_output=True, text=True).stdout.splitlines()
    picked = [line for line in selected if any(line.endswith(f"[{i}]") for i in ids)]
    print(f"chapter tests: {len(files)} file(s) whole ({', '.join(files)}); {len(picked)} case(s) of the shared "
          f"view and exercise tests ({', '.join(sorted(set(ids)))})", flush=True)
    return subprocess.call(pytest + files + picked, cwd=ROOT, env=os.environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
