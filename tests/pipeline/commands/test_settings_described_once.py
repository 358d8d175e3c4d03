"""A setting is described once, on its Settings field (attncore.settings.about): the
command's --help, the starter config and the config reader's type check all read it."""

from __future__ import annotations

import dataclasses

import click
import pytest
from attention_video.attncore import sources
from attention_video.attncore.settings import (
    WEIGHT_SOURCES,
    Settings,
    SettingsError,
    check_types,
    help_of,
)
from attention_video.pipeline.commands.cli import SETTINGS, cli
from attention_video.pipeline.commands.starter import starter_text

FIELDS = dataclasses.fields(Settings)


def test_every_field_has_its_description():
    for f in FIELDS:
        assert help_of(f).strip(), f.name


def test_the_command_and_the_starter_say_the_fields_words():
    params = {p.name: p for p in cli.params}
    text = starter_text()
    for f in FIELDS:
        help_text = help_of(f)
        assert help_text in (params[f.name].help or ""), f.name
        assert f"# {help_text}" in text, f.name
    assert list(params["weights"].type.choices) == list(WEIGHT_SOURCES)
    for row in sources.SOURCES.values():  # each model's words come from its row
        assert (f"{row.name}: {row.description}" in " ".join(params["weights"].help.split())) \
            == row.selectable
    assert isinstance(params["theme"].type, click.Choice)


def test_a_description_changed_on_the_field_changes_both(monkeypatch):
    """The weights' description is on its field and nowhere else."""
    f = SETTINGS["weights"]
    changed = dict(f.metadata, help="Where the numbers come from.")
    monkeypatch.setattr(f, "metadata", changed)
    from attention_video.pipeline.commands.cli import make_command

    weights = next(p for p in make_command().params if p.name == "weights")
    assert weights.help.startswith("Where the numbers come from.")
    assert "# Where the numbers come from. Allowed:" in starter_text()


@pytest.mark.parametrize("name, value, words", [
    ("d_model", "4", "d_model: expected a whole number, got str '4'"),
    ("query", [1], "query: expected a word of the sentence, got list [1]"),
    ("pace", "fast", "pace: expected a number such as 1.25, got str 'fast'"),
    ("translate", 1, "translate: expected true or false, got int 1"),
])
def test_the_config_reader_names_the_fields_type(name, value, words):
    with pytest.raises(SettingsError) as info:
        check_types({name: value})
    assert str(info.value) == words


def test_the_config_reader_takes_what_the_fields_type_allows():
    check_types({"pace": 1, "chapters": ["dot"], "head": "auto", "voice": None, "d_k": None})
