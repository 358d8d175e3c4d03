"""What every test process shares."""

from __future__ import annotations

import sys

import pytest
from _pytest.nodeid import NodeId


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
