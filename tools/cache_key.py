"""Keep the book's execution cache true: empty it when anything a chapter's outputs depend on, beyond its code, changed.

`make book` executes the chapters through jupyter-cache (`execute_notebooks: cache` in `_config.yml`), which matches a
chapter to its cached run by the chapter's code cells alone. The outputs also depend on the library (`src/byhand`, its
code and its data), the pinned versions, the kernel's configuration and, for the exercises' index, the chapters'
labels and titles. This script hashes those into one key and
compares it with the key the cache was filled under (`KEY_FILE` inside the cache folder). When they differ, or when
there is no key yet, it empties the cache, so every chapter runs afresh; when they agree, the cache is kept and only
the chapters whose code changed are executed again. Both editions read the same cache, so the student edition
executes nothing that the instructor edition has run.

    python tools/cache_key.py [CACHE_DIR]      (default: _build/.jupyter_cache)
"""
from __future__ import annotations

import hashlib
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY_FILE = "byhand-key.txt"
# what a chapter's outputs depend on besides its own code cells (folders are read whole, recursively)
INPUTS = ("src/byhand", "requirements.txt", "requirements-dev.txt", "pyproject.toml", "tools/kernel")
# The exercises' index (book/50_exercises.md) reads the chapters' labels and titles: those lines are part of the key.
HEADINGS = re.compile(r"^(?:\([A-Za-z0-9_.:-]+\)=|# .+)$", re.M)


def key(root: Path = ROOT) -> str:
    """sha256 over the path and bytes of every file in INPUTS (compiled caches left out), in a fixed order."""
    h = hashlib.sha256()
    for name in INPUTS:
        path = root / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            if "__pycache__" in f.parts or f.suffix == ".pyc":
                continue
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    for f in sorted((root / "book").glob("*.md")):
        h.update(f.name.encode() + b"\0" + "\n".join(HEADINGS.findall(f.read_text(encoding="utf-8"))).encode() + b"\0")
    return h.hexdigest()


def refresh(cache: Path, root: Path = ROOT) -> str:
    """Empty ``cache`` unless it was filled under the current key; leave the current key in it. Returns a report."""
    now = key(root)
    stamp = cache / KEY_FILE
    before = stamp.read_text().strip() if stamp.exists() else None
    if before == now:
        return f"execution cache {cache}: kept (library, pins and kernel config unchanged; key {now[:12]})"
    if cache.exists():
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    stamp.write_text(now + "\n")
    why = "no key recorded" if before is None else f"key {before[:12]} -> {now[:12]}"
    return f"execution cache {cache}: emptied ({why}); every chapter runs afresh"


if __name__ == "__main__":
    print(refresh(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / ".jupyter_cache"))
