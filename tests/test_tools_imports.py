"""tools/ has no import circle: the scripts import each other only downward (issue: a circle made check_html,
check_a11y and check_figures import each other inside functions)."""
import ast
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def imports() -> dict[str, set[str]]:
    """For each script in tools/, the other scripts of tools/ it imports, anywhere in its code."""
    names = {p.stem for p in TOOLS.glob("*.py")}
    graph = {}
    for p in TOOLS.glob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        graph[p.stem] = {m.split(".")[0] for m in mods} & names
    return graph


def test_tools_import_one_another_without_a_circle():
    graph, done, path = imports(), set(), []

    def visit(name):
        assert name not in path, "import circle: " + " -> ".join(path[path.index(name):] + [name])
        if name in done:
            return
        path.append(name)
        for dep in sorted(graph[name]):
            visit(dep)
        path.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)
    assert graph["browser"] == set()  # the shared base imports none of the checks
