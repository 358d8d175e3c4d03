"""How a render reports itself: a live rich display on a terminal (chapters done, time
elapsed and left), plain lines when standard error is a file or a pipe, nothing but
errors with --quiet. The pipeline only says lines; this reads the chapter ones."""

from __future__ import annotations

import re
import sys
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

PLAN = re.compile(r"^chapters:\s+(\d+) to play at (\d+) fps")  # app.video says it first
VIDEO = re.compile(r"\(([\d.]+) s of video\)")  # a rendered chapter's length
DONE = re.compile(r"^\s*(\[[^\]]*\]\s*)?chapter .*: (cached|rendered in|FAILED)")


def plural(n: int, word: str) -> str:
    """'1 chapter', '2 chapters'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


class Reporter:
    """A `say` for pipeline.commands.app: call it with each message; use it as a context
    manager around the run so that the live display is closed (and the terminal restored)."""

    def __init__(self, mode: str = "auto", stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.mode = mode  # "quiet", "verbose" (plain lines), "auto" (live on a terminal)
        self.live = mode == "auto" and self.stream.isatty()
        self._progress: Progress | None = None
        self._task = None
        self._fps = 0

    def __enter__(self) -> Reporter:
        if self.live:
            console = Console(file=self.stream)
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("chapters, {task.fields[frames]} frames"), TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(), console=console, transient=True)
            self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __call__(self, message: str) -> None:
        if self.mode == "quiet":
            return
        if self._progress is None:
            print(message, file=self.stream, flush=True)
            return
        plan = PLAN.match(message)
        if plan:  # a new render (--watch makes one per save): a new bar
            if self._task is not None:
                self._progress.remove_task(self._task)
            self._fps = int(plan.group(2))
            self._task = self._progress.add_task("rendering", total=int(plan.group(1)), frames=0)
            return
        if self._task is not None and DONE.match(message):
            seconds = VIDEO.search(message)
            frames = round(float(seconds.group(1)) * self._fps) if seconds else 0
            task = self._progress.tasks[self._task]
            self._progress.update(self._task, advance=1, frames=task.fields["frames"] + frames)
        self._progress.console.print(message, markup=False, highlight=False)
