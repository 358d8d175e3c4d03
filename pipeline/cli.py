"""The command line: parse, validate, hand to the pipeline. Every error is one line."""

from __future__ import annotations

import errno
import sys
import time
from pathlib import Path
from typing import Any

import click

from attncore.settings import QUALITIES, SettingsError, build_settings, parse_chapters

EPILOG = """\b
Examples:
  render.py "The black cat drank the milk"
  render.py "The black cat drank the milk" --query cat -q l
  render.py "The ball is blue" --target "La bola es azul"
  render.py --config examples/default.toml --chapters 3-6
"""


class HeadType(click.ParamType):
    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is not a head number or 'auto'", param, ctx)


def _say(message: str) -> None:
    click.echo(message, err=True)


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"],
                                                "max_content_width": 100})
@click.argument("sentence", required=False)
@click.option("-c", "--config", "config", type=click.Path(dir_okay=True, path_type=Path),
              help="TOML file with any of the settings below (flags win).")
@click.option("-q", "--quality", type=click.Choice(list(QUALITIES)), default=None,
              help="l 480p15, m 720p30, h 1080p30 (default), k 2160p60.")
@click.option("-o", "--output", default=None, help="Video path (default media/<sentence>.mp4).")
@click.option("--query", default=None, help="The word the video follows (default: the last word).")
@click.option("--query-index", type=int, default=None, help="Token index of the followed word (0-based), for a repeated word.")
@click.option("--target", default=None, help="Second sentence: cross-attention, queries from it.")
@click.option("--chapters", default=None, help="Chapters to render, e.g. 1,3,6 or 2-5.")
@click.option("--weights", type=click.Choice(["random", "pretrained"]), default=None,
              help="random: small untrained model; pretrained: a real BERT-family model.")
@click.option("--model", default=None, help="Pretrained checkpoint folder (Hugging Face layout).")
@click.option("--layer", type=int, default=None, help="Pretrained layer (0-based).")
@click.option("--head", type=HeadType(), default=None, help="Head to follow, or 'auto'.")
@click.option("--seed", type=int, default=None, help="Seed of the random weights.")
@click.option("--d-model", "d_model", type=int, default=None, help="Embedding width (random).")
@click.option("--d-k", "d_k", type=int, default=None, help="Query/key/value width (random).")
@click.option("--heads", type=int, default=None, help="Number of heads (random).")
@click.option("--causal/--no-causal", default=None, help="Decoder masking: no word sees a later one.")
@click.option("--softmax/--no-softmax", default=None, help="--no-softmax skips chapter 5, as the article does.")
@click.option("--positional/--no-positional", default=None, help="Add positional encoding.")
@click.option("--max-tokens", type=int, default=None, help="Longest sentence accepted (default 32).")
@click.option("--theme", type=click.Choice(["dark", "light"]), default=None)
@click.option("--language", type=click.Choice(["en", "zh"]), default=None, help="Caption language.")
@click.option("--export-json", type=click.Path(path_type=Path), default=None, help="Write the trace the video is made from.")
@click.option("--export-csv", type=click.Path(path_type=Path), default=None, help="Write every matrix as CSV into this folder.")
@click.option("--dry-run", is_flag=True, help="Build every scene without writing frames.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None, help="Chapters rendered at once (default: cores).")
@click.option("--no-cache", is_flag=True, help="Render every chapter again.")
@click.option("--list-heads", is_flag=True, help="Pretrained: table of layer × head with the followed word's top word.")
@click.option("--init-config", type=click.Path(path_type=Path), default=None, help="Write a commented starter TOML file and exit.")
@click.option("--watch", is_flag=True, help="Re-render whenever the --config file is saved.")
def cli(sentence: str | None, config: Path | None, chapters: str | None, export_json: Path | None,
        export_csv: Path | None, dry_run: bool, jobs: int | None, no_cache: bool, list_heads: bool,
        init_config: Path | None, watch: bool, **flags: Any) -> None:
    """Render a video that explains attention on SENTENCE with real computed numbers."""
    if init_config is not None:
        from pipeline.starter import write_starter

        write_starter(init_config)
        _say(f"wrote {init_config}")
        return
    if watch:
        if config is None:
            raise click.UsageError("--watch needs --config FILE.toml to watch")
        from pipeline.watch import watch_config

        watch_config(config, dict(sentence=sentence, chapters=chapters, **flags),
                     jobs=jobs, use_cache=not no_cache)
        return
    settings = make_settings(config, sentence, chapters, flags)
    run(settings, export_json=export_json, export_csv=export_csv, dry_run=dry_run, jobs=jobs,
        use_cache=not no_cache, list_heads=list_heads)


def make_settings(config: Path | None, sentence: str | None, chapters: str | None,
                  flags: dict[str, Any]):
    """Settings from the config file and the flags. The command's default is the real
    trained model with the head chosen automatically; --weights random gives the small
    hand-checkable model (whose default head is 0)."""
    from attncore.settings import read_toml

    values = dict(flags)
    values["sentence"] = sentence
    values["chapters"] = parse_chapters(chapters) if chapters is not None else None
    from_file = read_toml(config) if config else {}
    weights = values.get("weights") or from_file.get("weights") or "pretrained"
    values["weights"] = weights
    if weights == "pretrained" and values.get("head") is None and "head" not in from_file:
        values["head"] = "auto"
    return build_settings(config, **values)


def run(settings, *, export_json=None, export_csv=None, dry_run=False, jobs=None,
        use_cache=True, list_heads=False) -> None:
    from attncore.trace import build_trace
    from pipeline import run as pipeline
    from pipeline.exports import write_csv, write_json

    if list_heads:
        from attncore.pretrained import head_table

        if settings.weights != "pretrained":
            raise SettingsError("list_heads", "--list-heads needs --weights pretrained")
        click.echo(head_table(settings))
        return
    trace = build_trace(settings)
    if export_json:
        write_json(export_json, trace)
        _say(f"trace:     {export_json}")
    if export_csv:
        write_csv(export_csv, trace)
        _say(f"tables:    {export_csv}/")
    if dry_run:
        results = pipeline.dry_run(settings, trace, progress=_say)
        bad = [(r.chapter, r.off_frame[0]) for r in results if r.off_frame]
        total = sum(r.duration for r in results)
        _say(f"dry run: {len(results)} chapters build, {total:.0f} s of video"
             + (f"; WARNING objects off frame in chapter {bad[0][0]}" if bad else ""))
        return
    started = time.perf_counter()
    result = pipeline.render(settings, jobs=jobs, use_cache=use_cache, trace=trace,
                             progress=lambda s: _say("  " + s))
    _say(f"video:     {result.video}  ({result.duration:.1f} s, "
         f"{QUALITIES[settings.quality][3]}, rendered in {time.perf_counter() - started:.0f} s)")
    _say(f"subtitles: {result.subtitles}")


def main(argv: list[str] | None = None) -> None:
    """Entry point: one clear line for every error, never a traceback."""
    from pipeline.files import OutputError
    from pipeline.run import ChapterFailed, Terminated

    try:
        cli.main(args=argv, prog_name="render.py", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.UsageError as e:
        _say(f"Error: {e.format_message()} (see --help)")
        sys.exit(2)
    except click.ClickException as e:
        _say(f"Error: {e.format_message()}")
        sys.exit(e.exit_code)
    except (click.Abort, KeyboardInterrupt, Terminated):
        _say("Interrupted: stopped, temporary files removed, earlier output left as it was.")
        sys.exit(130)
    except SettingsError as e:
        _say(f"Error: {e}")
        sys.exit(2)
    except OutputError as e:
        _say(f"Error: {e}")
        sys.exit(1)
    except ChapterFailed as e:
        _say(f"Error: {e}; the other chapters are cached, rerun to retry")
        sys.exit(1)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            _say(f"Error: the disk is full while writing {_final_name(e.filename)}; "
                 "free some space and rerun (earlier output left as it was)")
        else:
            _say(f"Error: {e.strerror or e}{f': {e.filename}' if e.filename else ''}")
        sys.exit(1)
    except Exception as e:  # last resort: still one line, with the kind of failure
        _say(f"Error: {type(e).__name__}: {e}")
        sys.exit(1)


def _final_name(filename: str | None) -> str:
    """The output a temporary '.name.XXXX.part' file stands for."""
    if not filename:
        return "the output"
    p = Path(filename)
    if p.name.startswith(".") and p.name.endswith(".part"):
        return str(p.with_name(p.name[1:].rsplit(".", 2)[0]))
    return str(p)
