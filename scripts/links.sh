#!/usr/bin/env bash
# Makes the symbolic links of the tree links again where a checkout wrote them as files.
# attention_video/ holds links to the top-level folders (attncore -> ../attncore, ...):
# the install finds its packages through them and lint-imports reads the package through
# them. A checkout without symbolic links (git clone -c core.symlinks=false, a copy from a
# Windows drive) writes each link as a small file holding its target; git still records it
# as a link, so `git status` stays clean once it is one again.
# Usage: bash scripts/links.sh   (scripts/setup.sh runs it first)
set -euo pipefail
cd "$(dirname "$0")/.."

git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0  # an archive keeps its links
git ls-files -s -z | while IFS= read -r -d '' entry; do
  mode=${entry%% *} path=${entry#*$'\t'}
  [ "$mode" = 120000 ] && [ -f "$path" ] && [ ! -L "$path" ] || continue
  target=$(cat "$path")
  if ! ln -s "$target" "$path.link" 2>/dev/null; then
    echo "setup: this file system has no symbolic links ($path -> $target): clone onto one that has them" >&2
    exit 1
  fi
  mv -fT "$path.link" "$path"
  echo "setup: $path is a link to $target again"
done
