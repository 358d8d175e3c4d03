"""What every test process shares."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression
from _pytest.nodeid import NodeId

from tests.support import examples as hypothesis_examples

# The tests keep the project's and their own compiled modules (__pycache__, ignored by git)
# even where PYTHONDONTWRITEBYTECODE is set: otherwise every test process compiles them and
# rewrites every test module's asserts again on every run (about 5 CPU-seconds a process).
sys.dont_write_bytecode = False

CHROMIUM = "/usr/bin/chromium"  # Debian's (setup.sh --test installs it), never Playwright's download
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def pytest_configure(config: pytest.Config) -> None:
    """The fast tier is any run whose `-m` expression deselects the tests marked slow; its
    Hypothesis tests try fewer examples (tests/support/examples.py)."""
    expression = config.option.markexpr
    if expression:
        slow_runs = Expression.compile(expression).evaluate(lambda name, **kw: name == "slow")
        hypothesis_examples.fast_tier = not slow_runs


@pytest.fixture(autouse=True, scope="session")
def _own_text_folder(tmp_path_factory):
    """Manim writes each Text's SVG into config.text_dir and reads it back: two test
    processes (pytest-xdist workers) building the same text in one folder can read each
    other's half-written file ('ParseError: no element found'). Each process gets its own.
    (Test modules import Manim while they are collected, before this runs; a process
    that never imports it is left alone.)"""
    if "manim" in sys.modules:
        from manim import config

        config.text_dir = str(tmp_path_factory.mktemp("manim-texts"))
    yield


TESTS_CACHE_LIMIT = "250M"  # a run of the fast tier keeps ~100 MB of texts; older ones go


@pytest.fixture(autouse=True, scope="session")
def _tests_cache_folder(tmp_path_factory):
    """The cache folder of everything the tests run (chapter clips, kept texts, the decoder's
    dequantised weights, speech): one in the temporary folder, not the user's
    ~/.cache/attention-explainer, which the tests filled with ~100 MB of texts a run.

    It is kept between runs (in pytest's own temporary root, beside its numbered run
    folders) and shared by the workers and every process they start: a run then costs
    what a user's second run costs (an empty one builds every text again, about twice a
    dry run's time). Its entries are keyed by the code that makes them, as in the user's
    folder. Scenes a test builds without the pipeline keep their texts there too (a process's
    first render or lint turned that on, so a test's cost hung on what ran before it in its
    worker). Every command prunes the cache folder after it runs, walking all of it (2.8
    CPU-seconds a command in a user's full 2 GiB folder), so it is held to
    TESTS_CACHE_LIMIT. A test that needs an empty or a broken cache, or another limit,
    sets the variable itself, which wins."""
    from attention_video.pipeline.cache.limits import LIMIT_ENV
    from attention_video.pipeline.cache.paths import CACHE_ENV

    root = tmp_path_factory.getbasetemp()
    while root.parent != root and not root.name.startswith("pytest-of-"):
        root = root.parent  # a worker's is pytest-of-<user>/pytest-<n>/popen-gw<i>
    if root.parent == root:  # (--basetemp elsewhere: beside it)
        root = tmp_path_factory.getbasetemp().parent
    chosen = {CACHE_ENV: str(root / "attention-explainer-cache"), LIMIT_ENV: TESTS_CACHE_LIMIT}
    before = {name: os.environ.get(name) for name in chosen}
    os.environ.update(chosen)
    if "manim" in sys.modules:  # scenes built directly keep their texts as a render's do
        from attention_video.fastmanim.texts import use_text_cache
        from attention_video.pipeline.cache.limits import TEXTS

        use_text_cache(Path(chosen[CACHE_ENV]) / TEXTS)
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def playwright():
    """Playwright's driver, started once per test process (one may run at a time in a thread)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright):
    """One headless Chromium per test process for the page tests, which share the
    xdist_group "page" and so one worker: a launch took about two CPU-seconds, and each
    test module launched its own. Each test opens its own context or tab."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (bash scripts/setup.sh --test installs it)")
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


def _module_builds(item: pytest.Item) -> bool:
    """Whether the test reads a module-scoped fixture of its own module (a build its
    module's tests share)."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    module = getattr(getattr(item, "module", None), "__name__", None)
    return any(d.scope == "module" and getattr(d.func, "__module__", None) == module
               for ds in defs.values() for d in ds)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` sends the tests of one xdist_group to one worker by the group name
    that pytest-xdist appends to each test's id ("…::test@scene-builds"). pytest-xdist 3.8
    appends it to `item._nodeid`, which pytest 9.2 no longer reads (the id is `item._id`),
    so every group was split over both workers and each built its chapters twice. Where
    the name is missing from the id, it is appended here, as pytest-xdist means to.

    A test that reads a module-scoped build of its module and names no group joins its
    module's group, so the build is made once per session, not once per worker."""
    if not getattr(config.option, "loadgroup", False):  # set in the workers of --dist loadgroup
        return
    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})
        if not groups and _module_builds(item):
            groups = [item.nodeid.partition("::")[0]]
        if groups and "@" not in item.nodeid.rpartition("]")[2]:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")
