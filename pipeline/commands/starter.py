"""A commented starter config: every setting, its description (the one on its Settings
field), its default and its allowed values."""

from __future__ import annotations

from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any

import tomlkit
from attention_video.attncore.settings import Settings, choices_of, help_of, not_utf8
from attention_video.pipeline.outputs.files import (
    OutputError,
    check_writable_folder,
    write_text_atomic,
)


def _quoted(values) -> str:
    return " or ".join(f'"{v}"' for v in values)


def help_line(f: Field) -> str:
    """A setting's comment: its description (the one on its field,
    attncore.settings.about) and the values it allows, as TOML spells them."""
    allowed = choices_of(f)
    return f"# {help_of(f)}" + (f" Allowed: {_quoted(allowed)}." if allowed else "")
EXAMPLES = {"query": "cat", "query_index": 4, "target": "La bola es azul",
            "model": "/path/to/checkpoint", "head": "auto", "d_k": 4,
            "output": "media/lecture.mp4", "voice": "joe"}
DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Settings) if f.default is not MISSING}


def _toml_value(v: Any) -> str:
    """A value as TOML writes it (tomlkit: strings escaped, tuples as arrays)."""
    return tomlkit.item(list(v) if isinstance(v, tuple) else v).as_string()


def starter_text(given: dict[str, Any] | None = None) -> str:
    """Every setting with its help line, set to its default (unset ones commented out), or
    to the value `given` (what was typed with --init-config, such as the sentence)."""
    given = {k: v for k, v in (given or {}).items() if v is not None}
    lines = ["# Attention explainer settings. Render with:  render.py --config THIS_FILE",
             "# Command-line flags override what is set here. Unset settings are commented out.",
             ""]
    for f in fields(Settings):
        name = f.name
        lines.append(help_line(f))
        value = given.get(name, DEFAULTS[name])
        if value is None:
            lines.append(f"# {name} = {_toml_value(EXAMPLES[name])}")
        else:
            lines.append(f"{name} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def write_starter(path: Path, given: dict[str, Any] | None = None) -> None:
    """The starter file at `path`, with the settings `given` on the command line."""
    path = Path(path)
    for name, value in (given or {}).items():  # typed in another encoding: one line
        error = not_utf8(name, value) if isinstance(value, str) else None
        if error is not None:
            raise error
    if path.exists():
        raise OutputError(f"{path} exists already; give a new file name")
    check_writable_folder(path)
    write_text_atomic(path, starter_text(given))
