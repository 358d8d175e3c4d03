"""--watch: make the outputs again (the video, or the storyboard, with the deck, the other
formats and the exports asked for) whenever the config file (or a file it names) is saved.

Polls modification times (no extra dependency; half a second is quick enough for a
human save), waits for a burst of saves to settle, and reports a broken config without
exiting so the lecturer can fix it and save again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from attention_video.attncore.settings import SettingsError, read_toml
from attention_video.pipeline.commands import app
from attention_video.pipeline.outputs.files import OutputError
from attention_video.pipeline.run.render import ChapterFailed


def _stamp(paths: list[Path]) -> tuple:
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(p), None, None))
    return tuple(out)


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
                 poll: float = 0.5, settle: float = 0.6, max_renders: int | None = None,
                 say: app.Say = app.to_stderr, show: app.Say = app.to_stdout) -> int:
    """Make the outputs now and after every save; returns the number of runs tried. `flags`
    are the command's flags (None = not given), `chapters` and `sentence` among them;
    `request` is everything else the command asked for (--storyboard, --slides, --format,
    the exports), made again on every save."""
    flags = dict(flags)
    chapters = flags.pop("chapters", None)
    sentence = flags.pop("sentence", None)
    request = request or app.Request()
    renders = 0
    last = None
    say(f"watching {config} (Ctrl-C to stop)")
    while max_renders is None or renders < max_renders:
        files = watched_files(config)
        stamp = _stamp(files)
        if stamp != last:
            while True:  # let a burst of saves settle
                time.sleep(settle)
                again = _stamp(files)
                if again == stamp:
                    break
                stamp = again
            last = stamp
            renders += 1
            try:
                settings = app.make_settings(config, sentence, chapters, flags)
                app.make_outputs(settings, request, say=say, show=show)
                say(f"[{time.strftime('%H:%M:%S')}] done; waiting for the next save")
            except (SettingsError, OutputError, ChapterFailed, OSError) as e:
                say(f"[{time.strftime('%H:%M:%S')}] Error: {e} (fix it and save again)")
            continue
        time.sleep(poll)
    return renders
