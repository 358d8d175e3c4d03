"""Which of the project's modules the fast tier exercises: a function of the module has to
run during a test, not merely be imported while the tests are collected (not a benchmark:
the check that moving tests to the slow tier left no module untested).

    .venv/bin/python benchmarks/exercised.py            # the fast tier, as README runs it
    .venv/bin/python benchmarks/exercised.py -- tests/attncore   # any pytest arguments instead

It runs pytest with the plugin tests/support/exercised.py (cProfile in each test process),
then lists every module under attncore/, scenes/, pipeline/, fastmanim/ and
attention_video/ with functions none of which ran. A module without functions (constants,
re-exports) counts as exercised when imported. Code run only in a subprocess or a thread
is not seen, so a module listed may still be tested that way; the exit status is 1 when
any module is listed."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAST = ["-m", "not slow", "-n", "2", "--dist", "loadgroup"]  # README: the fast tier
PACKAGES = ("attncore", "scenes", "pipeline", "fastmanim", "attention_video")


def project_modules() -> list[Path]:
    """Every source file of the packages, by its real path (attention_video's folders are
    links to the top-level ones, so each is listed once)."""
    files = {p.resolve() for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    return sorted(files)


def has_functions(module: Path) -> bool:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(tree))


def ran_in(args: list[str]) -> set[str]:
    """The source files whose functions ran in the tests pytest runs with `args`."""
    with tempfile.TemporaryDirectory(prefix="exercised-") as folder:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-p", "tests.support.exercised", f"--exercised-into={folder}", *args]
        done = subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if done.returncode not in (0, 1):
            raise SystemExit(f"pytest exited {done.returncode}")
        return {line for f in Path(folder).glob("*.txt")
                for line in f.read_text(encoding="utf-8").splitlines() if line}


def main() -> int:
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else FAST
    ran = ran_in(args)
    modules = [m for m in project_modules() if has_functions(m)]
    missing = [m for m in modules if str(m) not in ran]
    print(f"{len(modules) - len(missing)} of {len(modules)} modules with functions ran code "
          "in the tests (modules without functions are not counted)")
    for module in missing:
        print(f"  not exercised: {module.relative_to(ROOT)}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
