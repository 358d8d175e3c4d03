"""--watch: make the outputs again (the video, or the storyboard, with the deck, the other
formats and the exports asked for) whenever the config file (or a file it names) is saved.

The operating system says when a file changes (watchfiles: inotify, FSEvents, ...;
nothing is polled); the folders are watched, not the files, so an editor that saves by
writing a new file and renaming it is seen too. A burst of saves settles into one run,
saves during a run make one more, and a broken config is reported without exiting so the
lecturer can fix it and save again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import watchfiles
from attention_video.attncore.settings import SettingsError, read_toml
from attention_video.pipeline.commands import app
from attention_video.pipeline.outputs.files import OutputError
from attention_video.pipeline.run.render import ChapterFailed


def watched_files(config: Path) -> list[Path]:
    """The config, and the model checkpoint it names (its config.json), if any."""
    files = [config]
    try:
        model = read_toml(config).get("model")
        if isinstance(model, str):
            files.append(Path(model) / "config.json")
    except Exception:
        pass
    return files


def watch_config(config: Path, flags: dict[str, Any], *, request: app.Request | None = None,
                 poll: float = 0.1, settle: float = 0.3, max_renders: int | None = None,
                 say: app.Say = app.to_stderr, show: app.Say = app.to_stdout) -> int:
    """Make the outputs now and after every save; returns the number of runs tried. `flags`
    are the command's flags (None = not given), `chapters` and `sentence` among them;
    `request` is everything else the command asked for (--storyboard, --slides, --format,
    the exports), made again on every save. `settle`: the quiet time that ends a burst
    of saves; `poll`: how often the loop wakes without a change (the first run starts
    then; no file is read on a wake)."""
    flags = dict(flags)
    chapters = flags.pop("chapters", None)
    sentence = flags.pop("sentence", None)
    request = request or app.Request()
    renders, due = 0, True  # the first run, at once
    say(f"watching {config} (Ctrl-C to stop)")
    while max_renders is None or renders < max_renders:
        files = {os.path.realpath(p) for p in watched_files(config)}
        folders = sorted({os.path.dirname(f) for f in files if os.path.isdir(os.path.dirname(f))})
        for changes in watchfiles.watch(
                *folders, watch_filter=lambda _change, path, files=files: (
                    os.path.realpath(path) in files),
                step=_ms(settle), debounce=max(_ms(settle) * 8, 2000), rust_timeout=_ms(poll),
                yield_on_timeout=True):
            due = due or bool(changes)
            if not due:
                continue
            due = False
            renders += 1
            try:
                settings = app.make_settings(config, sentence, chapters, flags)
                app.make_outputs(settings, request, say=say, show=show)
                say(f"[{time.strftime('%H:%M:%S')}] done; waiting for the next save")
            except (SettingsError, OutputError, ChapterFailed, OSError) as e:
                say(f"[{time.strftime('%H:%M:%S')}] Error: {e} (fix it and save again)")
            if max_renders is not None and renders >= max_renders:
                break
            if {os.path.realpath(p) for p in watched_files(config)} != files:
                due = True  # the config names another model: watch its folder, and run
                break
    return renders


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
