"""Train a model this project ships and write it as a safetensors file.

    python -m attention_video.pipeline.commands.train_models tiny --seed 0 --out attncore/tiny/default.safetensors
    python -m attention_video.pipeline.commands.train_models translate --seed 0 --out attncore/translate/default.safetensors

made the shipped files (then named `python -m attncore.tiny.train` and `python -m
attncore.translate.train`, as their metadata still says). attncore trains and returns a
model (attncore.tiny.train.train, attncore.translate.train.train); this command reports
progress, writes the file and prints its held-out scores. The same settings give the same
file only on the same numpy, BLAS kernel and CPU, which the file records.
"""

from __future__ import annotations

import argparse
import sys
import time

from attention_video.attncore.tiny import train as tiny_train
from attention_video.attncore.tiny.config import TrainConfig as TinyConfig
from attention_video.attncore.tiny.store import save as save_tiny
from attention_video.attncore.translate import train as translation_train
from attention_video.attncore.translate.config import TrainConfig as TranslationConfig
from attention_video.attncore.translate.store import save as save_translation

PROG = "python -m attention_video.pipeline.commands.train_models"


def _bar(step: int, total: int, info: tiny_train.TrainInfo, started: float) -> str:
    width = 30
    filled = round(width * step / total)
    return (f"\r[{'#' * filled}{'.' * (width - filled)}] {step}/{total}  restart "
            f"{info.restart + 1}/{info.restarts} {info.phase:7s} loss {info.loss:.3f}  "
            f"held-out accuracy {info.accuracy:.3f}  {time.perf_counter() - started:5.1f} s")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Train a model this project ships and save it as safetensors.")
    models = parser.add_subparsers(dest="model", required=True)
    tiny = models.add_parser("tiny", help="the tiny attention model",
                             description="Train the tiny attention model and save it.")
    defaults = TinyConfig()
    tiny.add_argument("--seed", type=int, default=defaults.seed,
                      help="corpus split, initialisation and minibatch order")
    tiny.add_argument("--d-model", type=int, default=defaults.d_model,
                      help=f"width of E, P, X (2 to 16; default {defaults.d_model})")
    tiny.add_argument("--heads", type=int, default=defaults.heads,
                      help=f"attention heads (1 to 4; default {defaults.heads})")
    tiny.add_argument("--restarts", type=int, default=defaults.restarts,
                      help=f"initialisations to try (default {defaults.restarts})")
    tiny.add_argument("--out", required=True, help="the .safetensors file to write")
    translate = models.add_parser(
        "translate", help="the English → Spanish translation model",
        description="Train the English → Spanish translation model and save it.")
    defaults = TranslationConfig()
    translate.add_argument("--seed", type=int, default=defaults.seed,
                           help="corpus split, initialisation and minibatch order")
    translate.add_argument("--restarts", type=int, default=defaults.restarts,
                           help=f"initialisations to try (default {defaults.restarts})")
    translate.add_argument("--out", required=True, help="the .safetensors file to write")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.model == "tiny":
            config = TinyConfig(seed=args.seed, d_model=args.d_model, heads=args.heads,
                                restarts=args.restarts)
        else:
            config = TranslationConfig(seed=args.seed, restarts=args.restarts)
    except ValueError as e:
        parser.error(str(e))
    if args.model == "tiny":
        train_tiny(config, args.out)
    else:
        train_translation(config, args.out)
    return 0


def train_tiny(config: TinyConfig, out: str) -> None:
    started = time.perf_counter()
    interactive = sys.stderr.isatty()
    last = [-1]

    def progress(step: int, total: int, info: tiny_train.TrainInfo) -> None:
        if interactive:
            print(_bar(step, total, info, started), end="", file=sys.stderr, flush=True)
        elif step * 10 // total != last[0]:  # a line every 10% in logs
            last[0] = step * 10 // total
            print(_bar(step, total, info, started).lstrip("\r"), file=sys.stderr, flush=True)

    model = tiny_train.train(config, progress)
    if interactive:
        print(file=sys.stderr)
    save_tiny(model, out)
    s = model.scores
    print(f"trained in {time.perf_counter() - started:.1f} s; kept restart "
          f"{model.history.restart + 1} of {config.restarts}")
    for split in ("validation", "test"):
        print(f"{split:10s} ({s[f'{split}_sentences']} sentences): replaced-object accuracy "
              f"{s[f'{split}_accuracy']:.3f}, object attends most to its verb "
              f"{s[f'{split}_object_to_verb']:.3f} (head {s[f'{split}_head']}), "
              f"loss {s[f'{split}_loss']:.4f}")
    for sentence in ("The black cat drank the milk", "黑猫喝了牛奶"):
        r = model.run(sentence)
        focus = len(r.tokens) - 1
        row = r.heads[s["test_head"]].weights[focus]
        ranked = sorted(range(len(row)), key=lambda j: -row[j])
        print(f"{sentence}: {r.tokens[focus].text} → " + ", ".join(
            f"{r.tokens[j].text} {row[j]:.2f}" for j in ranked[:3]))
    print(f"wrote {out}")


def train_translation(config: TranslationConfig, out: str) -> None:
    started = time.perf_counter()
    last = [-1]

    def progress(step: int, total: int, info: translation_train.TrainInfo) -> None:
        if step * 10 // total != last[0]:  # a line every 10%
            last[0] = step * 10 // total
            print(f"{step}/{total}  restart {info.restart + 1}/{info.restarts} "
                  f"{info.phase:7s} loss {info.loss:.3f}  held-out word accuracy "
                  f"{info.accuracy:.3f}  {time.perf_counter() - started:5.1f} s",
                  file=sys.stderr, flush=True)

    model = translation_train.train(config, progress)
    save_translation(model, out)
    s = model.scores
    print(f"trained in {time.perf_counter() - started:.1f} s; kept restart "
          f"{model.history.restart + 1} of {config.restarts}")
    for split in ("validation", "test"):
        print(f"{split:10s} ({s[f'{split}_sentences']} pairs, rounded weights): exact match "
              f"{s[f'{split}_exact_match']:.3f}, word accuracy {s[f'{split}_token_accuracy']:.3f}"
              f", alignment {s[f'{split}_alignment']:.3f}, crossing {s[f'{split}_crossing']:.3f}"
              f", loss {s[f'{split}_loss']:.4f}")
    for sentence in ("The ball is blue", "the blue ball"):
        r = model.run(sentence, eos_row=True)
        rows = []
        for i, t in enumerate(r.target_tokens):
            j = int(r.cross.weights[i].argmax())
            rows.append(f"{t.text}→{r.source_tokens[j].text} {r.cross.weights[i, j]:.2f}")
        print(f"{sentence} → {model.translate(sentence)}   ({', '.join(rows)})")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
