"""byhand installed from a wheel, not from the source tree: the instructors' index and a chapter's exercises work.

The Colab cell installs byhand without ``-e``, so the package must not reach into the book or the repository. This
test builds a wheel from a copy of the sources (so the worktree gets no ``build/`` or ``egg-info``), installs it into a
fresh virtual environment that borrows only NumPy and Matplotlib from this one, and runs there, outside the repository,
with ``python -I`` so that no PYTHONPATH points back at ``src/``. About 20 s, so it is marked ``slow``.
"""
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest

from byhand.exercises import all_exercises

ROOT = Path(__file__).resolve().parent.parent

# Run inside the wheel's environment. It prints what the test compares with this process's own registry.
PROBE = r"""
import json, sys
import byhand
from byhand.exercises import all_exercises, answer_box, check
from byhand.exercises.index import exercise_index

index = exercise_index()  # from the registry alone: no anchors given, every exercise linked
chapter = [e for e in all_exercises() if e.chapter == "40_inside_the_model"]  # its solves read the shipped weights
answers = {e.key: (None if callable(e.solve().answer) else float(e.solve().answer)) for e in chapter}
print(json.dumps({"file": byhand.__file__, "count": index.count, "markdown": index.markdown,
                  "answers": answers, "box": answer_box("inside.1")._repr_html_(),
                  "verdict": repr(check("dot.1", float("nan")))}))
"""


def _site_packages(python: Path) -> str:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.mark.slow
def test_a_wheel_install_builds_the_index_and_a_chapters_exercises(tmp_path):
    src = tmp_path / "src_copy"
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    # build isolation fetches the pinned setuptools from the configured package index (a local mirror offline)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, cwd=tmp_path)
    wheel, = (tmp_path / "dist").glob("byhand-*.whl")

    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(_site_packages(python))
    # NumPy and Matplotlib from this environment, appended after the new site-packages: its editable byhand (a path
    # line in a .pth of this environment) is not processed from there, so only the wheel's byhand can be imported
    (site / "borrowed.pth").write_text(str(Path(np.__file__).parent.parent) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    run = subprocess.run([str(python), "-I", "-c", PROBE], check=True, capture_output=True, text=True, cwd=tmp_path,
                         env=env)
    got = json.loads(run.stdout)

    assert Path(got["file"]).resolve().is_relative_to(site.resolve()), got["file"]  # the wheel's copy, not src/
    book = [e for e in all_exercises() if e.solve.__module__.startswith("byhand.exercises.part")]
    assert got["count"] == len(book) and all(f"[{e.key}](#{e.anchor})" in got["markdown"] for e in book)
    here = {e.key: e.solve().answer for e in book if e.chapter == "40_inside_the_model"}
    assert set(got["answers"]) == set(here) and got["answers"]["inside.2"] == pytest.approx(here["inside.2"], rel=1e-9)
    assert "data-exercise" in got["box"] and "type a number" in got["verdict"]
