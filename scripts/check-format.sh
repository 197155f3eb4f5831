#!/usr/bin/env bash
# Fails (exit 1) when a C or C++ source of the repository is not formatted as
# .clang-format says, naming the files; `clang-format-22 -i FILE` fixes one.
# Of test/, only the embedding consumers are C/C++ sources.
# Usage: scripts/check-format.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' | grep -v '^test/' || true; git ls-files 'test/Embedding/*.cpp' 'test/Embedding/*.c')
else
  mapfile -t files < <(find include lib runtime tools unittests bench python test/Embedding \
    -name '*.cpp' -o -name '*.h' -o -name '*.c' | sort)
fi
# clang-format exits non-zero on a violation: its status must not end the
# script (pipefail) before the files are named.
bad=$({ clang-format-22 --dry-run -Werror "${files[@]}" 2>&1 || true; } |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ -n "$bad" ]; then
  echo "check-format: not formatted (clang-format-22 -i FILE):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
