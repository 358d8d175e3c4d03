"""Write the trace as JSON or CSV files (atomically)."""

from __future__ import annotations

from pathlib import Path

from attention_video.attncore.export import csv_tables, to_json
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.outputs.files import check_writable_folder, write_text_atomic


def write_json(path: Path, trace: AttentionTrace, settings: Settings | None = None) -> None:
    check_writable_folder(Path(path))
    write_text_atomic(Path(path), to_json(trace, settings=settings and settings.to_dict()))


def write_csv(folder: Path, trace: AttentionTrace) -> list[Path]:
    folder = Path(folder)
    check_writable_folder(folder / "X.csv", create=True)
    out = []
    for name, text in csv_tables(trace).items():
        p = folder / f"{name}.csv"
        write_text_atomic(p, text)
        out.append(p)
    return out
