"""What the command does, as a library: settings from a config file and flags, then the
outputs asked for (a table of heads, the trace as JSON or CSV, a dry run or the video).
The click layer (pipeline.commands.cli) and watch mode (pipeline.commands.watch) both hand over to it."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_video.attncore import sources
from attention_video.attncore.build import build_trace, choose_source, encoder_source, settings_for
from attention_video.attncore.settings import (
    QUALITIES,
    Settings,
    SettingsError,
    build_settings,
    flag,
    ignored_options,
    parse_chapters,
)
from attention_video.attncore.tiny.corpus import vocabulary
from attention_video.attncore.tiny.store import fingerprint, load_default
from attention_video.attncore.tiny.trace import train_config
from attention_video.attncore.trained.provenance import bit_identical_here
from attention_video.attncore.translate.corpus import vocabulary as translation_vocabulary
from attention_video.pipeline.cache.limits import cache_limit, human_size, prune_now_and_then
from attention_video.pipeline.cache.paths import ensure_cache_dir, models_dir
from attention_video.pipeline.commands import registry
from attention_video.pipeline.commands.batch import (
    BatchFailed,
    read_manifest,
    render_batch,
    summary_table,
)
from attention_video.pipeline.commands.modes import MODES, Mode, is_given
from attention_video.pipeline.commands.progress import plural
from attention_video.pipeline.commands.tiny_models import model_path, tiny_model, train_and_keep
from attention_video.pipeline.outputs.files import (
    SIDECARS,
    check_outputs,
    check_writable_folder,
    companions,
)
from attention_video.pipeline.outputs.storyboard import storyboard_path
from attention_video.pipeline.outputs.subtitles import writes_sidecars
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.executors import DaskExecutor
from attention_video.pipeline.run.lint import LintFailed, lint_video
from attention_video.pipeline.run.render import (
    dry_run,
    named,
    narrator_for,
    output_path,
    plan_chapters,
    render_video,
)
from attention_video.pipeline.run.stills import make_storyboard

Say = Callable[[str], None]


def to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def to_stdout(message: str) -> None:
    print(message, flush=True)


@dataclass(frozen=True, init=False)
class Request:
    """What one command asks for besides the video's settings: the modes and outputs by
    name (pipeline.commands.modes, pipeline.commands.registry) with what each option was
    given, and how to run. Request(slides=True, formats=("mp4", "gif"), jobs=2)."""

    asked: tuple[tuple[str, Any], ...]  # (name, value) of each mode and output given
    jobs: int | None = None  # chapters rendered at once; None: one per core
    use_cache: bool = True  # reuse chapter clips rendered before
    scheduler: str | None = None  # a Dask scheduler (tcp://HOST:PORT) to render chapters on

    def __init__(self, *, jobs: int | None = None, use_cache: bool = True,
                 scheduler: str | None = None, **asked: Any) -> None:
        unknown = sorted(set(asked) - asked_names())
        if unknown:
            raise TypeError(f"Request() has no mode or output {unknown[0]!r}")
        object.__setattr__(self, "asked", tuple(sorted(
            (name, value) for name, value in asked.items() if is_given(value))))
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(self, "use_cache", use_cache)
        object.__setattr__(self, "scheduler", scheduler)

    def value(self, name: str) -> Any:
        """What mode or output `name` was given (None: not asked for)."""
        return dict(self.asked).get(name)

    def __getattr__(self, name: str) -> Any:  # request.slides: only the tables' names
        if name != "asked" and name in asked_names():
            return self.value(name)
        raise AttributeError(f"Request has no attribute {name!r}")

    @property
    def makes_video(self) -> bool:
        """Whether this run renders the video (the modes that build scenes without frames,
        or stills, do not)."""
        return mode_of(self).option is None


def asked_names() -> set[str]:
    """What a Request can ask for: every mode's option and every output."""
    return ({m.option for m in MODES if m.option is not None}
            | {o.name for o in registry.OUTPUTS})


def make_settings(config: Path | None, sentence: str | None, chapters: str | None,
                  flags: dict[str, Any]) -> Settings:
    """Settings from the config file and the flags (flags win; None = not given).
    `chapters` is the --chapters text, such as '1,3,6' or '2-5'."""
    values = dict(flags, sentence=sentence,
                  chapters=parse_chapters(chapters) if chapters is not None else None)
    return build_settings(config, **values)


def make_trace(settings: Settings, say: Say = to_stderr):
    """The trace, with the tiny model from disk (trained on first use); says which weights
    were chosen and why when the choice was automatic."""

    source, reason = choose_source(settings)
    ignored = ignored_options(settings, source)
    if ignored:  # only --weights auto gets here: explicit sources refuse them
        say(f"ignored:   {', '.join(flag(n) for n in ignored)}: --weights auto chose the "
            f"{source} model, which does not read {'them' if len(ignored) > 1 else 'it'}")
    kept = sources.Kept(tiny_model=lambda s: tiny_model(s, say), models_dir=models_dir())
    trace = build_trace(settings, kept=kept)
    if reason:  # chosen here: said now (else once the outputs are made, said_weights)
        say(f"weights:   {weights_line(trace)}")
    return trace


def said_weights(trace, say: Say) -> None:
    """The weights line at the end of a run, unless make_trace said it already."""
    if not trace.source_reason:
        say(f"weights:   {weights_line(trace)}")


def weights_line(trace) -> str:
    """Which weights made the numbers, and why they were chosen (for the last lines)."""
    if not trace.trained:
        name = f"untrained random weights (seed {trace.seed})"
    elif trace.can.layered:
        name = f"{trace.model_name}, layer {trace.layer}, head {trace.head_index}"
    else:
        name = trace.model_name
    return name + (f": {trace.source_reason}" if trace.source_reason else "")


def vocabulary_table() -> str:
    """The tiny model's words, by language."""
    lines = ["The tiny model's vocabulary (--weights tiny, or auto when every word is in it):"]
    for code, name in (("en", "English"), ("zh", "中文")):
        lines.append(f"  {name}: " + " ".join(vocabulary(code)))
    lines.append("The translation model's vocabulary (--translate, or --target with both "
                 "sentences in it):")
    lines.append("  English: " + " ".join(translation_vocabulary("en")))
    lines.append("  Español: " + " ".join(w for w in translation_vocabulary("es")
                                        if not w.startswith("<")))
    return "\n".join(lines)


def retrain(settings: Settings, say: Say = to_stderr, show: Say = to_stdout) -> None:
    """Train the tiny model for these settings (seed, sizes) again and report its scores;
    it replaces the kept one of the same settings (the shipped file is never touched)."""
    config = train_config(settings)
    model = train_and_keep(config, model_path(config), say)
    s = model.scores
    for split in ("validation", "test"):
        show(f"{split:10s} {s[f'{split}_sentences']} sentences: replaced-object accuracy "
             f"{s[f'{split}_accuracy']:.3f}, object attends most to its verb "
             f"{s[f'{split}_object_to_verb']:.3f} (head {s[f'{split}_head']})")
    shipped = load_default()
    if shipped.train_config == config:  # the same weights, history and scores: same bytes but
        # for how each says it was made (this one records the platform that trained it)
        same = fingerprint(shipped) == fingerprint(
            dataclasses.replace(model, provenance=shipped.provenance))
        expected, why = bit_identical_here(shipped.provenance)
        show("identical to the shipped weights" if same else
             "differs from the shipped weights" + ("" if expected else f": {why}"))


def make_outputs(settings: Settings, request: Request | None = None, *, say: Say = to_stderr,
                 show: Say = to_stdout) -> None:
    """Make what `request` asks for (default: the video) with its mode's function
    (pipeline.commands.modes); progress and paths go to `say`, tables to `show`."""
    request = request or Request()
    MAKERS[mode_of(request).name](settings, request, say, show)


def list_vocab(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """--list-vocab: the words the two models trained here know."""
    show(vocabulary_table())


def train_tiny(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """--train-tiny: the tiny model trained again, and its scores."""
    retrain(settings, say=say, show=show)


def list_heads(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """--list-heads: the layer × head table of a real model: an encoder (auto: the one the
    sentence gets) or the decoder with --weights decoder."""
    tables = sources.with_head_table()
    if settings.weights not in (sources.AUTO, *tables):
        raise SettingsError("list_heads", f"--list-heads needs --weights "
                            f"{sources.or_list(tables)} (or auto)")
    name = (settings.weights if settings.weights != sources.AUTO else
            encoder_source(settings, "--list-heads")[0])
    kept = sources.Kept(models_dir=models_dir())
    show(sources.call(sources.source(name).head_table, settings_for(settings, name), kept))


def _checked_trace(settings: Settings, request: Request, say: Say):
    """Every output path checked (one line, before any work), then the trace, and the
    exports asked for."""
    files, folders = planned_outputs(settings, request)
    if request.makes_video:  # a wrong output folder: one line, first
        check_writable_folder(files["the video"], create=not settings.output)
    check_outputs(files, folders)  # nothing written over another, or onto a folder
    if request.makes_video:
        ensure_cache_dir()  # clips are rendered and kept there: say so now if it cannot be
    narrator = (None if request.storyboard or request.lint  # a bad voice: one line, first
                else narrator_for(settings, keep=request.use_cache))
    trace = make_trace(settings, say)
    for output in _asked(request, "export"):
        output.write(registry.Job(settings, trace, request.value(output.name), say,
                                  _wrote(say)))
    return trace, narrator


def storyboard(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """--storyboard: one still per caption, as a contact sheet and a PDF handout (-o, given
    with it, names the sheet)."""
    sheet = registry.given_path(request.storyboard)
    png = storyboard_path(settings.sentence, sheet)
    check_writable_folder(png, create=sheet is None)  # a wrong folder: one line, first
    trace, _ = _checked_trace(settings, request, say)
    board = make_storyboard(settings, trace, sheet, jobs=request.jobs,
                            progress=lambda s: say("  " + s))
    say(f"storyboard: {len(board.stills)} stills, {board.pages} pages, made in "
        f"{board.seconds:.1f} s")
    said_weights(trace, say)
    show(str(board.png))
    show(str(board.pdf))


def check_scenes(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """--dry-run: every scene built, no frame written."""
    trace, narrator = _checked_trace(settings, request, say)
    results = dry_run(settings, trace, progress=say, narrator=narrator)
    bad = [(r.chapter, r.off_frame[0]) for r in results if r.off_frame]
    total = sum(r.duration for r in results)
    say(f"dry run: {plural(len(results), 'chapter')} build, {total:.0f} s of video"
        + (f"; WARNING objects off frame in {named(bad[0][0])}" if bad else ""))
    for role, path in would_write(settings, request).items():
        say(f"dry run: would write {role} to {path} (nothing written)")


def would_write(settings: Settings, request: Request) -> dict[str, Path]:
    """What the same command without --dry-run would write, by role: the video's files and
    every output asked for with it, but the exports (written from the trace, in a dry run
    too: a dry run is the quick way to them)."""
    asked = {name: value for name, value in request.asked
             if name != "dry_run" and getattr(registry.by_name(name), "kind", None) != "export"}
    files, folders = planned_outputs(settings, Request(**asked))
    if not writes_sidecars(settings.captions):  # no .srt/.vtt/.chapters.vtt beside it
        unwritten = {f"the {sidecar}" for sidecar in SIDECARS}
        files = {role: p for role, p in files.items() if role not in unwritten}
    return files | folders


def lint(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """--lint: every caption's picture checked in a dry run; one line per problem (to
    `show`), the summary to `say`; LintFailed (exit status 1) if there is any."""
    trace, _ = _checked_trace(settings, request, say)
    checked = lint_video(settings, trace, jobs=request.jobs, progress=lambda s: say("  " + s))
    for problem in checked.problems:
        show(str(problem))
    say(checked.summary())
    if checked.problems:
        raise LintFailed(checked.summary())


def video(settings: Settings, request: Request, say: Say, show: Say) -> None:
    """The video (the default), with its subtitles, and the formats and deck asked for."""
    trace, narrator = _checked_trace(settings, request, say)
    started = time.perf_counter()
    with chapter_executor(request.scheduler, say) as executor:
        say(f"chapters:  {len(plan_chapters(settings, trace))} to play at "  # the progress total
            f"{QUALITIES[settings.quality][2]} fps")
        result = render_video(settings, jobs=request.jobs, use_cache=request.use_cache,
                              trace=trace, progress=lambda s: say("  " + s), executor=executor,
                              narrator=narrator)
    say(f"video:     {result.duration:.1f} s, {QUALITIES[settings.quality][3]}, captions "
        f"{settings.captions}, rendered in {time.perf_counter() - started:.0f} s")
    said_weights(trace, say)
    show(str(result.video))
    for old in result.stale_sidecars:
        say(f"note:      {old} is not this video's (its captions are {settings.captions}); a "
            "player shows it over the picture's captions: remove it unless that is wanted")
    if result.subtitles is not None:  # --captions soft (pipeline.run.render.write_video)
        show(str(result.subtitles))
        show(str(result.captions))
        show(str(result.chapter_track))
    if result.descriptions is not None:  # --describe
        show(str(result.descriptions))
    video_extras(settings, request, result.chapters, result.video, say, show, trace=trace)


def video_extras(settings: Settings, request: Request, chapters: list[ChapterResult],
                 video: Path, say: Say, show: Say | None = None, *, trace=None) -> None:
    """What is made from a finished video: each extra output asked for (the other formats,
    the deck, the companion page from `trace`, the video's), by its row's writer
    (pipeline.commands.registry). Paths to `show` (default: `say`, with what they are),
    one per line."""
    extras = _asked(request, "extra")
    made = frozenset(o.name for o in extras)
    for output in extras:
        output.write(registry.Job(settings, trace, request.value(output.name), say,
                                  _wrote(say, show), video, chapters, made))


def _wrote(say: Say, show: Say | None = None) -> registry.Wrote:
    """How a file made is told: its path to `show` (its size to `say`), or, without
    `show`, one line to `say` with what it is."""
    def wrote(what: str, path: Path, size: str = "") -> None:
        if show is None:
            say(f"{what + ':':10s} {path}{f'  ({size})' if size else ''}")
        else:
            if size:
                say(f"{what + ':':10s} {size}")
            show(str(path))

    return wrote


def _asked(request: Request, kind: registry.Kind) -> list[registry.Output]:
    """The outputs of `kind` that `request` asks for, in the table's order."""
    return [o for o in registry.OUTPUTS if o.kind == kind and request.value(o.name) is not None]


MAKERS = {"list_vocab": list_vocab, "train_tiny": train_tiny, "list_heads": list_heads,
          "storyboard": storyboard, "lint": lint, "dry_run": check_scenes, "video": video}


def mode_of(request: Request) -> Mode:
    """The mode a request asks for: the first of MODES whose option it sets, else the video."""
    return next(m for m in MODES if m.option is None or getattr(request, m.option))


def planned_outputs(settings: Settings, request: Request) -> tuple[dict[str, Path],
                                                                    dict[str, Path]]:
    """Every path the command will write, by role, computed before anything is made:
    the video's files (itself, its subtitles and captions) when it is made, then each
    output's asked for (pipeline.commands.registry), files and folders. An extra is not
    made in a mode without the video, nor a mode that is not the one run."""
    mode = mode_of(request)
    video = output_path(settings)
    files: dict[str, Path] = {}
    folders: dict[str, Path] = {}
    if mode.option is None:
        files |= {f"the {role}": path
                  for role, path in companions(video, settings.describe).items()}
    for output in registry.OUTPUTS:
        value = request.value(output.name)
        if value is None or (output.kind == "extra" and mode.option is not None) or (
                output.kind == "mode" and output.name != mode.name):
            continue
        plan = registry.Planned(settings, video, value)
        files |= output.files(plan)
        folders |= output.folders(plan)
    return files, folders


@contextmanager
def chapter_executor(scheduler: str | None, say: Say = to_stderr) -> Iterator[Any]:
    """None: the pipeline's own local process pool. A scheduler address: a client of that
    Dask cluster, closed afterwards (the cluster keeps running)."""
    if scheduler is None:
        yield None
        return

    with DaskExecutor(scheduler) as executor:
        n = executor.workers
        say(f"scheduler: {scheduler} ({n} worker{'s' if n > 1 else ''} so far)")
        yield executor


def read_cache_limit() -> int | None:
    """$ATTENTION_CACHE_LIMIT in bytes (None: no limit); a SettingsError when unreadable,
    so a run stops before it renders anything."""

    try:
        return cache_limit()
    except ValueError as e:
        raise SettingsError("ATTENTION_CACHE_LIMIT", str(e)) from None


def tidy_cache(limit: int | None, say: Say = to_stderr) -> None:
    """Keep the cache folder under `limit` (see pipeline.cache.limits.prune; walked at most
    every ten minutes); says what it removed."""

    try:
        pruned = prune_now_and_then(limit=limit)
    except OSError as e:  # the outputs are written: a cache that cannot be tidied is no error
        say(f"cache:     not tidied ({e.strerror or e})")
        return
    if pruned is not None and pruned.removed:
        entries = "entry" if pruned.removed == 1 else "entries"
        say(f"cache:     removed the {pruned.removed} least recently used {entries} "
            f"({human_size(pruned.freed)}) to stay under {human_size(limit)} "
            f"(ATTENTION_CACHE_LIMIT)")


def make_batch(manifest: Path, flags: dict[str, Any], chapters: str | None, *,
               jobs: int | None = None, use_cache: bool = True, scheduler: str | None = None,
               say: Say = to_stderr, show: Say = to_stdout) -> None:
    """Render every video of a manifest (pipeline.commands.batch) and show the summary table;
    BatchFailed when any video was not made. `flags` (None = not given) win over the
    manifest."""
    values = dict(flags, chapters=parse_chapters(chapters) if chapters is not None else None)
    videos = read_manifest(manifest, values)
    started = time.perf_counter()
    say(f"batch:     {len(videos)} video{'s' if len(videos) > 1 else ''} from {manifest}")
    with chapter_executor(scheduler, say) as executor:
        rows = render_batch(videos, executor=executor, jobs=jobs, use_cache=use_cache, say=say,
                            make_trace=make_trace)
    show(summary_table(rows, time.perf_counter() - started))
    failed = [r.video.number for r in rows if r.error is not None]
    if failed:
        raise BatchFailed(f"{len(failed)} of {len(rows)} videos failed (video "
                          f"{', '.join(map(str, failed))}: see the table); the others are made, "
                          "and the chapters rendered are cached: rerun to retry")
