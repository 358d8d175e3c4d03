"""A pytest plugin that records which of the project's source files ran code during the
tests (not while they were collected): `benchmarks/exercised.py` loads it to show that the
fast tier still exercises every module.

Each test process (each pytest-xdist worker) runs cProfile, a profiler written in C and so
cheap enough for the whole tier, from its first test to its last, and writes the source
files of the functions that ran into the folder given by `--exercised-into`. A file whose
functions ran only in a subprocess or another thread is not counted: the check errs on the
side of calling a module unexercised."""

from __future__ import annotations

import cProfile
import os
from pathlib import Path

import pytest

_PROFILE_KEY = pytest.StashKey[cProfile.Profile]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--exercised-into", metavar="DIR", default=None,
                     help="write the source files whose functions ran in the tests to DIR")


def _folder(config: pytest.Config) -> Path | None:
    folder = config.getoption("--exercised-into")
    return Path(folder) if folder else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    """Profiling starts with the first test, after collection has imported every module."""
    config = item.config
    if _folder(config) is None or _PROFILE_KEY in config.stash:
        return
    config.stash[_PROFILE_KEY] = profile = cProfile.Profile()
    profile.enable()


def pytest_sessionfinish(session: pytest.Session) -> None:
    folder, profile = _folder(session.config), session.config.stash.get(_PROFILE_KEY, None)
    if folder is None or profile is None:
        return
    profile.disable()
    profile.create_stats()
    files = sorted({os.path.realpath(filename) for filename, _, _ in profile.stats})
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"{worker}.txt").write_text("\n".join(files) + "\n", encoding="utf-8")
