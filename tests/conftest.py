"""What every test process shares."""

from __future__ import annotations

import sys

import pytest


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
