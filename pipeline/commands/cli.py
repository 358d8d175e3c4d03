"""The command line: parse, validate, hand to the pipeline (pipeline.commands.app). Every error
is one line."""

from __future__ import annotations

import dataclasses
import errno
import os
import shlex
import sys
import tempfile
import time
import traceback
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import cloup
from attention_video.attncore.settings import (
    Settings,
    SettingsError,
    choices_of,
    cut,
    flag,
    help_of,
)
from attention_video.pipeline.cache.paths import cache_dir, settle_cache_dir
from attention_video.pipeline.commands import app, registry
from attention_video.pipeline.commands import watch as watcher
from attention_video.pipeline.commands.batch import BatchFailed
from attention_video.pipeline.commands.modes import refused
from attention_video.pipeline.commands.progress import Reporter
from attention_video.pipeline.commands.starter import write_starter
from attention_video.pipeline.outputs.files import OutputError
from attention_video.pipeline.run.lint import LintFailed
from attention_video.pipeline.run.render import ChapterFailed
from attention_video.pipeline.run.workers import Terminated, exit_status, stop_on_signals

EPILOG = """\b
Examples:
  {prog} "The black cat drank the milk"
  {prog} "The black cat drank the milk" --query cat -q l
  {prog} "The ball is blue" --target "La bola es azul" --weights random
  {prog} --config examples/default.toml --chapters 3-6
  {prog} "The black cat drank the milk" --captions soft --format webm
  {prog} --batch examples/course.toml -q l
  {prog} --batch examples/course.toml --scheduler tcp://10.0.0.5:8786
"""
FIRST_EXAMPLE = '{prog} "The black cat drank the milk" -q l'
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
FORMATTER = cloup.HelpFormatter.settings(max_width=100, col2_min_width=40)


class Command(cloup.Command):
    """cloup's command, its examples in the name it was called by (render.py or
    attention-video)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.epilog = EPILOG.format(prog=ctx.find_root().info_name)
        super().format_epilog(ctx, formatter)


class HeadType(click.ParamType):
    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is not a head number or 'auto'", param, ctx)


def scheduler_address(ctx, param, value: str | None) -> str | None:
    """A Dask scheduler address: PROTOCOL://HOST:PORT (tcp, tls, ...) or HOST:PORT."""
    if value is None:
        return None
    rest = value.split("://", 1)[1] if "://" in value else value
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(f"{value!r} is not a scheduler address; give "
                                 "tcp://HOST:PORT, as `dask scheduler` prints it")
    return value


def _say(message: str) -> None:
    click.echo(message, err=True)


SETTINGS = {f.name: f for f in dataclasses.fields(Settings)}
HINTS = typing.get_type_hints(Settings)
SETTING_GROUPS = {  # the settings' options by --help section, in their order there
    "What to say": ("query", "query_index", "target", "translate", "chapters", "softmax",
                    "max_tokens"),
    "Which model": ("weights", "model", "layer", "head", "seed", "d_model", "d_k", "heads",
                    "causal", "positional"),
    "How it looks": ("quality", "theme", "captions", "language", "pace", "voice",
                     "questions", "think_time", "describe"),
}  # and -o, the first of "Outputs"
SHORT = {"quality": "-q", "output": "-o"}
METAVARS = {"pace": "SPEED", "voice": "joe|PATH.onnx", "think_time": "SECONDS"}
SWITCHES = ("translate",)  # given or not: no --no-translate (other true/false settings have both)


def setting_option(name: str) -> Callable[[Any], Any]:
    """The option of setting `name`: its help and allowed values from its field
    (attncore.settings.about), its type from the field's; None when not given, so a
    config file's value stands."""
    f, hint, long = SETTINGS[name], HINTS[name], flag(name)
    union = isinstance(hint, types.UnionType)  # int | None → int; tuple[str, ...] stays
    kinds = [k for k in (typing.get_args(hint) if union else (hint,)) if k is not type(None)]
    default = ("" if f.default is None or isinstance(f.default, (bool, tuple)) else
               f" Default: {f.default:g}." if isinstance(f.default, float) else
               f" Default: {f.default}.")  # (an unset one's help says what unset means)
    if kinds == [bool]:
        decls = [long] if name in SWITCHES else [f"{long}/--no-{long[2:]}"]
        extra: dict[str, Any] = dict(is_flag=True) if name in SWITCHES else {}
    else:
        decls = [d for d in (SHORT.get(name), long) if d]
        choices = choices_of(f)
        extra = dict(type=click.Choice(choices) if choices else
                     HeadType() if kinds == [int, str] else
                     kinds[0] if kinds[0] in (int, float) else None,
                     metavar=METAVARS.get(name))
    return cloup.option(*decls, name, default=None, help=help_of(f) + default,
                        **extra)


def output_option(output: registry.Output) -> Callable[[Any], Any]:
    """The command-line option of one output of the table (pipeline.commands.registry)."""
    o = output.option
    kinds: dict[str, dict[str, Any]] = {
        "flag": dict(is_flag=True),
        "text": dict(default=None, metavar=o.metavar),
        "path": dict(type=click.Path(path_type=Path), default=None, metavar=o.metavar),
    }
    return cloup.option(*o.flags, output.name, help=o.help, **kinds[o.value])


def _rows(group: str) -> list[Callable[[Any], Any]]:
    return [output_option(o) for o in registry.OUTPUTS if o.option.group == group]


def make_command() -> click.Command:
    """The command: the settings' options, then each output's from the table (read now:
    a row added before this call gets its option)."""
    decorators = [
        cloup.command(cls=Command, epilog=EPILOG, context_settings=CONTEXT,
                      formatter_settings=FORMATTER),
        cloup.argument("sentence", required=False,
                       help=f"{SETTINGS['sentence'].metadata['help']} Or `sentence` in "
                            "--config."),
        *(cloup.option_group(title, *map(setting_option, names))
          for title, names in SETTING_GROUPS.items()),
        cloup.option_group(
            "Outputs",
            setting_option("output"),
            *_rows("Outputs"),
        ),
        cloup.option_group(
            "Performance",
            cloup.option("-j", "--jobs", type=click.IntRange(1, 64), default=None, help="Chapters rendered at once (default: cores)."),
            cloup.option("--no-cache", is_flag=True, help="Render every chapter again."),
            cloup.option("--scheduler", callback=scheduler_address, default=None, metavar="tcp://HOST:PORT", help="Render the chapters on this Dask scheduler's workers (same install on each; README) instead of local processes."),
        ),
        cloup.option_group(
            "Files and other modes",
            cloup.option("-c", "--config", "config", type=click.Path(dir_okay=True, path_type=Path),
                         help="TOML file with any of the settings below (flags win)."),
            cloup.option("--init-config", type=click.Path(path_type=Path), default=None, help="Write a commented starter TOML file and exit."),
            cloup.option("--watch", is_flag=True, help="Make the outputs again (the video or --storyboard, with --slides, --format and the exports) whenever the --config file is saved."),
            cloup.option("--batch", type=click.Path(path_type=Path), default=None, help="Render every video of a TOML manifest ([defaults] and one [[video]] table each, e.g. examples/course.toml) through one chapter cache, then print a summary; flags given apply to every video."),
            cloup.option("--dry-run", is_flag=True, help="Build every scene without writing frames."),
            *_rows("Files and other modes"),
            cloup.option("--list-heads", is_flag=True, help="Pretrained: table of layer × head with the followed word's top word."),
            cloup.option("--list-vocab", is_flag=True, help="Print the tiny model's vocabulary and exit."),
            cloup.option("--train-tiny", is_flag=True, help="Retrain the tiny model (--seed, --d-model, --heads) and print its held-out scores."),
        ),
        cloup.option_group(
            "Messages",
            cloup.option("--quiet", is_flag=True, help="Only errors, and the paths written (standard output)."),
            cloup.option("--verbose", is_flag=True, help="Every step as a line, no live progress display."),
        ),
        cloup.version_option(None, "-V", "--version", package_name="attention-explainer",
                             message="%(prog)s %(version)s"),
    ]

    def cli(quiet: bool, verbose: bool, **params: Any) -> None:
        """Render a video that explains attention on SENTENCE with real computed numbers.
        The paths written go to standard output, one per line; messages to standard error."""
        if quiet and verbose:
            raise click.UsageError("--quiet and --verbose contradict each other; give one")
        with Reporter("quiet" if quiet else "verbose" if verbose else "auto") as say:
            _run(say, params)

    for decorate in reversed(decorators):
        cli = decorate(cli)
    return cli


RUN_OPTIONS = ("sentence", "config", "chapters", "jobs", "no_cache", "scheduler", "batch",
               "init_config", "watch")  # the command's own; the rest are settings, modes, outputs


def _run(_say: Reporter, params: dict[str, Any]) -> None:
    """The command once its messages have a place to go (`_say`): `params` are its
    parameters by name (None or False: not given)."""
    limit = app.read_cache_limit()
    why = refused(params)
    if why is not None:  # a combination pipeline.commands.modes refuses
        raise click.UsageError(why)
    (sentence, config, chapters, jobs, no_cache, scheduler, batch, init_config,
     watch) = (params.pop(name) for name in RUN_OPTIONS)
    asked = {name: params.pop(name) for name in app.asked_names()}  # modes and outputs
    flags = params  # the settings
    if batch is not None:
        del flags["output"]
        try:
            app.make_batch(batch, flags, chapters, jobs=jobs, use_cache=not no_cache,
                           scheduler=scheduler, say=_say, show=click.echo)
        except SettingsError:  # the manifest refused before any video: nothing new was kept,
            raise  # and the refusal stays one line (no cache report under it)
        except BaseException:  # a failed video leaves the others' clips: tidy all the same
            app.tidy_cache(limit, say=_say)
            raise
        app.tidy_cache(limit, say=_say)
        return
    if init_config is not None:
        write_starter(init_config, {"sentence": sentence})  # a sentence typed goes in it
        _say(f"wrote {init_config}" + (" with the sentence given" if sentence else ""))
        click.echo(str(init_config))
        return
    if watch and config is None:
        raise click.UsageError("--watch needs --config FILE.toml to watch")
    for output in registry.OUTPUTS:
        if output.takes_output and asked[output.name]:  # -o names its file: True, its default
            asked[output.name] = flags.pop("output") or True
        if output.parse is not None and asked[output.name] is not None:
            try:
                asked[output.name] = output.parse(asked[output.name])
            except ValueError as e:
                raise click.BadParameter(str(e), param_hint=f"'{output.flag}'") from None
    request = app.Request(jobs=jobs, use_cache=not no_cache, scheduler=scheduler, **asked)
    if watch:
        watcher.watch_config(config, dict(sentence=sentence, chapters=chapters, **flags),
                             request=request, say=_say, show=click.echo)
        return
    settings = app.make_settings(config, sentence, chapters, flags)
    app.make_outputs(settings, request, say=_say, show=click.echo)
    app.tidy_cache(limit, say=_say)


cli = make_command()


INTERRUPTED = "Interrupted: stopped, temporary files removed, earlier output left as it was."


def main(argv: list[str] | None = None) -> None:
    """Entry point: one clear line for every error, never a traceback. Ctrl-C or SIGTERM
    at any moment: the workers stop, one line, exit 130 or 143 within seconds."""
    global _interrupted_said
    _interrupted_said = False
    settle_cache_dir()
    with stop_on_signals(_give_up):
        try:
            _main(argv)
        except (click.Abort, KeyboardInterrupt, Terminated) as e:  # imports and handlers too
            _say_interrupted()
            sys.exit(exit_status(e))


_interrupted_said = False  # this run's INTERRUPTED line is out (main() starts a run)


def _say_interrupted() -> None:
    global _interrupted_said
    if not _interrupted_said:
        _interrupted_said = True
        _say(INTERRUPTED)


def _give_up(status: int) -> None:
    """A clean-up or exit handler still runs seconds after Ctrl-C/SIGTERM: end now (the
    workers are stopped first; a worker also dies with this process, pipeline.run.workers)."""
    _say_interrupted()
    sys.stderr.flush()
    os._exit(status)


def _main(argv: list[str] | None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not args and f"_{_prog()}_COMPLETE".replace("-", "_").upper() not in os.environ:
        # No argument: what to type, rather than an hour-long 1080p render of the default
        _say(f"Usage: {_prog()} [OPTIONS] [SENTENCE]\n"
             f"Example: {FIRST_EXAMPLE.format(prog=_prog())}\n"
             f"Every option: {_prog()} --help")
        sys.exit(2)
    try:
        cli.main(args=argv, prog_name=_prog(), standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.Abort:  # Ctrl-C, as click passes it on: main() says so
        raise
    except click.UsageError as e:
        _say(f"Error: {e.format_message()} (see --help)")
        sys.exit(2)
    except click.ClickException as e:
        _say(f"Error: {e.format_message()}")
        sys.exit(e.exit_code)
    except SettingsError as e:
        _say(f"Error: {e}")
        sys.exit(2)
    except OutputError as e:
        _say(f"Error: {e}")
        sys.exit(1)
    except BatchFailed as e:
        _say(f"Error: {e}")
        sys.exit(1)
    except LintFailed:  # its problems and summary are printed
        sys.exit(1)
    except ChapterFailed as e:
        _say(f"Error: {e}" if e.disk_full else
             f"Error: {e}; the other chapters are cached, rerun to retry")
        sys.exit(1)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            _say(f"Error: the disk is full while writing {_final_name(e.filename)}; "
                 "free some space and rerun (earlier output left as it was)")
        else:
            _say(f"Error: {e.strerror or e}{f': {cut(str(e.filename))}' if e.filename else ''}")
        sys.exit(1)
    except Exception:  # a guard: every known failure is handled above
        _say(f"Error: this is a bug, please report it with the command "
             f"`{_command(argv)}` and the traceback saved in {_save_traceback()}")
        sys.exit(1)


def _command(argv: list[str] | None) -> str:
    """The command line as typed (quoted so that it can be pasted back)."""
    args = sys.argv[1:] if argv is None else argv
    return shlex.join([_prog(), *args])


def _prog() -> str:
    """The name the command was called by: attention-video when installed, else render.py
    (the script, whatever runs it: python render.py, a test runner)."""
    return "attention-video" if Path(sys.argv[0]).name == "attention-video" else "render.py"


def _save_traceback() -> str:
    """Write the current exception's traceback to a file (the cache folder, else the
    temporary folder) and return its path."""
    text = traceback.format_exc()
    for folder in (cache_dir() / "crashes", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=time.strftime("crash-%Y%m%d-%H%M%S-"),
                                        suffix=".txt", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            return name
        except OSError:
            continue
    return "(no file could be written)"


def _final_name(filename: str | None) -> str:
    """The output a temporary '.name.XXXX.part' file stands for."""
    if not filename:
        return "the output"
    p = Path(filename)
    if p.name.startswith(".") and p.name.endswith(".part"):
        return str(p.with_name(p.name[1:].rsplit(".", 2)[0]))
    return str(p)
