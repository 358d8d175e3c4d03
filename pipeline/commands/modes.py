"""What one run makes, and what cannot be asked for together: one table each.

A run makes one thing, its mode (the first of MODES whose option is given, else the
video); pipeline.commands.app has one function per mode. refusals() are the combinations
an option refuses, with the one line that says why: those of the run options here, and
those each output declares in its row (pipeline.commands.registry). The command line
(cli) and the notebook API (attention_video.api.explain) both read them, so they refuse
alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from attention_video.pipeline.commands import registry


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


def _batch_refuses() -> dict[str, str]:
    """Each video of a manifest has its own settings and runs as a plain video: --batch
    refuses every mode and every output."""
    own = {"sentence": "a sentence (each [[video]] has its own)",
           "config": "--config (use [defaults] or a video's `config` key)",
           "output": "-o (each [[video]] has its own `output`)",
           "watch": "--watch", "init_config": "--init-config"}
    modes = {m.option: m.flag for m in MODES if m.option is not None}
    return own | modes | {o.name: o.flag for o in registry.OUTPUTS if o.name not in modes}


def refusals() -> tuple[Refusal, ...]:
    """Every refused combination: the run options' (--batch, --scheduler, --watch), then
    each output's own (pipeline.commands.registry), in the order they are tried."""
    flags = {m.option: m.flag for m in MODES if m.option is not None}
    flags |= {o.name: o.flag for o in registry.OUTPUTS} | {"watch": "--watch",
                                                           "scheduler": "--scheduler"}
    extras = {o.name: o.flag for o in registry.extras()}
    own = tuple(
        Refusal(o.name, {n: flags[n] for n in o.refuses} | (extras if o.refuses_extras else {}),
                o.refusal)
        for o in registry.OUTPUTS if o.refusal is not None)
    return (
        Refusal("batch", _batch_refuses(),
                lambda given: f"--batch cannot be combined with {', '.join(given)}"),
        Refusal("scheduler", {"dry_run": "--dry-run", "storyboard": "--storyboard",
                              "watch": "--watch"},
                lambda given: "--scheduler renders video chapters; --dry-run, --storyboard "
                              "and --watch run here"),
        Refusal("watch", {"list_heads": "--list-heads", "list_vocab": "--list-vocab",
                          "train_tiny": "--train-tiny"},
                lambda given: "--watch makes outputs again on every save; --list-heads, "
                              "--list-vocab and --train-tiny run once, without it"),
        *own,
    )


def is_given(value: Any) -> bool:
    return value not in (None, False)


def refused(given: Mapping[str, Any]) -> str | None:
    """The line refusing the first combination of refusals() that `given` (option → value;
    None or False: not given) holds, else None."""
    for r in refusals():
        if is_given(given.get(r.option)):
            clash = [name for option, name in r.others.items() if is_given(given.get(option))]
            if clash:
                return r.message(clash)
    return None
