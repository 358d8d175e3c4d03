"""The fast tier (`-m "not slow"`, README) covers every test module: a costly check moves to
the slow tier (run in CI) only while a cheaper test of the same module stays fast. Read from
the source (decorators and `pytestmark`), so it costs nothing to run.

The fast tier's time is measured, not asserted: benchmarks/bench_tests.py."""

from __future__ import annotations

import ast

from tests.support.paths import ROOT

TESTS = ROOT / "tests"


# Modules with no fast test, and why: each test times or stops a real render, or renders a
# whole corpus; they run in CI only.
SLOW_ONLY = {
    "tests/pipeline/run/test_cluster.py": "renders through a Dask cluster (marked alone)",
    "tests/pipeline/run/test_concurrency.py": "three renders at once (marked alone)",
    "tests/pipeline/run/test_render.py": "real renders timed and interrupted (marked alone)",
    "tests/pipeline/run/test_stopping.py": "a render stopped by each signal (marked alone)",
    "tests/pipeline/commands/test_decoder_interrupted.py": "a signal while the weights are written",
    "tests/tree/test_gallery.py": "the storyboards of every lint-corpus case",
}


def marked_slow(decorators: list[ast.expr]) -> bool:
    """`@pytest.mark.slow` among the decorators, or in a `pytestmark` list; one parameter
    marked slow (`pytest.param(..., marks=pytest.mark.slow)`) leaves the others fast."""
    todo = list(decorators)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "param":
            continue
        if isinstance(node, ast.Attribute) and node.attr == "slow" and \
                isinstance(node.value, ast.Attribute) and node.value.attr == "mark":
            return True
        todo += ast.iter_child_nodes(node)
    return False


def fast_tests(source: str) -> list[str]:
    """The test functions of a module that the fast tier runs."""
    tree = ast.parse(source)
    module_marks = [n.value for n in tree.body if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)]
    if marked_slow(module_marks):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            if not marked_slow(node.decorator_list):
                found.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") and \
                not marked_slow(node.decorator_list):
            found += [f"{node.name}.{f.name}" for f in node.body
                      if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
                      and not marked_slow(f.decorator_list)]
    return found


def test_every_test_module_keeps_a_fast_test():
    modules = sorted(TESTS.rglob("test_*.py"))
    assert len(modules) > 80
    bare = [p.relative_to(ROOT).as_posix() for p in modules
            if not fast_tests(p.read_text(encoding="utf-8"))]
    assert sorted(set(bare) - set(SLOW_ONLY)) == [], \
        "modules the fast tier no longer covers (keep a cheaper test fast, or say in SLOW_ONLY why not)"
    assert sorted(set(SLOW_ONLY) - set(bare)) == [], "no longer slow only: take it out of SLOW_ONLY"


def test_the_check_sees_a_module_with_only_slow_tests():
    assert fast_tests("import pytest\n@pytest.mark.slow\ndef test_a(): pass\n") == []
    assert fast_tests("import pytest\npytestmark = [pytest.mark.slow]\ndef test_a(): pass\n") == []
    assert fast_tests("import pytest\n@pytest.mark.slow\nclass TestA:\n    def test_b(self): pass\n") == []
    assert fast_tests("import pytest\n@pytest.mark.slow\ndef test_a(): pass\ndef test_b(): pass\n") \
        == ["test_b"]
    one_slow_parameter = ("import pytest\n@pytest.mark.parametrize('x', [1, pytest.param(2, "
                          "marks=pytest.mark.slow)])\ndef test_a(x): pass\n")
    assert fast_tests(one_slow_parameter) == ["test_a"]
