"""What one run makes, and what cannot be asked for together: one table each.

A run makes one thing, its mode (the first of MODES whose option is given, else the
video); pipeline.commands.app has one function per mode. REFUSALS are the combinations
an option refuses, with the one line that says why: the command line (cli) and the
notebook API (attention_video.api.explain) both read them, so they refuse alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mode:
    """One thing a run makes."""

    name: str
    option: str | None  # the request field (and command-line parameter) that asks for it
    flag: str  # that option on the command line


MODES = (  # in the order they win when several are given
    Mode("list_vocab", "list_vocab", "--list-vocab"),
    Mode("train_tiny", "train_tiny", "--train-tiny"),
    Mode("list_heads", "list_heads", "--list-heads"),
    Mode("storyboard", "storyboard", "--storyboard"),
    Mode("lint", "lint", "--lint"),
    Mode("dry_run", "dry_run", "--dry-run"),
    Mode("video", None, ""),  # the default
)


@dataclass(frozen=True)
class Refusal:
    """Option `option` cannot be combined with any of `others` (option → its name in the
    message); `message` is the line, given the names of those that were."""

    option: str
    others: dict[str, str]
    message: Callable[[list[str]], str]


def _needs(given: list[str]) -> str:
    return "needs" if len(given) == 1 else "need"


REFUSALS = (
    Refusal("batch", {  # each video of a manifest has its own
        "sentence": "a sentence (each [[video]] has its own)",
        "config": "--config (use [defaults] or a video's `config` key)",
        "output": "-o (each [[video]] has its own `output`)",
        "watch": "--watch", "dry_run": "--dry-run", "storyboard": "--storyboard",
        "slides": "--slides", "page": "--page", "formats": "--format",
        "export_json": "--export-json",
        "export_csv": "--export-csv", "list_heads": "--list-heads", "list_vocab": "--list-vocab",
        "train_tiny": "--train-tiny", "init_config": "--init-config", "lint": "--lint"},
        lambda given: f"--batch cannot be combined with {', '.join(given)}"),
    Refusal("scheduler", {"dry_run": "--dry-run", "storyboard": "--storyboard",
                          "watch": "--watch"},
            lambda given: "--scheduler renders video chapters; --dry-run, --storyboard and "
                          "--watch run here"),
    Refusal("watch", {"list_heads": "--list-heads", "list_vocab": "--list-vocab",
                      "train_tiny": "--train-tiny"},
            lambda given: "--watch makes outputs again on every save; --list-heads, "
                          "--list-vocab and --train-tiny run once, without it"),
    Refusal("lint", {"storyboard": "--storyboard", "watch": "--watch", "slides": "--slides",
                     "page": "--page", "formats": "--format", "scheduler": "--scheduler"},
            lambda given: f"--lint checks one video's pictures instead of making it: not with "
                          f"{', '.join(given)}"),
    Refusal("storyboard", {"slides": "--slides", "page": "--page", "formats": "--format"},
            lambda given: f"--storyboard makes stills instead of the video, and "
                          f"{' and '.join(given)} {_needs(given)} the video: make them in a "
                          "run without --storyboard"),
)


def is_given(value: Any) -> bool:
    return value not in (None, False)


def refused(given: Mapping[str, Any]) -> str | None:
    """The line refusing the first combination of REFUSALS that `given` (option → value;
    None or False: not given) holds, else None."""
    for r in REFUSALS:
        if is_given(given.get(r.option)):
            clash = [name for option, name in r.others.items() if is_given(given.get(option))]
            if clash:
                return r.message(clash)
    return None
