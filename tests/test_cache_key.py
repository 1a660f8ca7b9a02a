"""tools/cache_key.py: the book's execution cache is emptied exactly when the library, pins or kernel config change."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("cache_key", ROOT / "tools" / "cache_key.py")
cache_key = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cache_key)


def tree(tmp_path):
    for name in ("src/byhand/ops.py", "src/byhand/data/w.npz", "tools/kernel/ipython_kernel_config.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    for name in ("requirements.txt", "requirements-dev.txt", "pyproject.toml"):
        (tmp_path / name).write_text(name)
    return tmp_path


def test_the_cache_is_kept_while_nothing_changes_and_emptied_when_the_library_data_or_pins_do(tmp_path):
    root, cache = tree(tmp_path), tmp_path / "_build" / ".jupyter_cache"
    assert "emptied (no key recorded)" in cache_key.refresh(cache, root)
    (cache / "global.db").write_text("a cached run")
    assert "kept" in cache_key.refresh(cache, root) and (cache / "global.db").exists()
    for changed in ("src/byhand/ops.py", "src/byhand/data/w.npz", "requirements.txt", "tools/kernel/ipython_kernel_config.py"):
        (cache / "global.db").write_text("a cached run")
        (root / changed).write_text("edited " + changed)
        assert "emptied (key" in cache_key.refresh(cache, root), changed
        assert not (cache / "global.db").exists(), changed


def test_compiled_files_do_not_change_the_key(tmp_path):
    root = tree(tmp_path)
    before = cache_key.key(root)
    (root / "src/byhand/__pycache__").mkdir()
    (root / "src/byhand/__pycache__/ops.cpython-311.pyc").write_bytes(b"\0")
    assert cache_key.key(root) == before


def test_a_chapter_title_or_label_changes_the_key_and_its_prose_does_not(tmp_path):
    """The exercises' index reads every chapter's labels and title; the rest of the prose reaches no output."""
    root = tree(tmp_path)
    (root / "book").mkdir()
    chapter = root / "book" / "13_scores.md"
    chapter.write_text("(ch-scores)=\n# Scores\n\nSome prose.\n")
    before = cache_key.key(root)
    chapter.write_text("(ch-scores)=\n# Scores\n\nOther prose.\n")
    assert cache_key.key(root) == before
    chapter.write_text("(ch-scores)=\n# Attention scores\n\nOther prose.\n")
    assert cache_key.key(root) != before
