#!/usr/bin/env bash
# From a fresh clone: installs what is missing, builds, and runs the demo on
# the paper's MLPs (examples/). Usage: scripts/demo.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$build" >/dev/null
opt="$build/bin/overlap-opt"

for example in mlp_1d mlp_2d; do
  echo "=== examples/$example.mlir: parsed, verified, canonicalized ==="
  "$opt" "$root/examples/$example.mlir" --canonicalize --cse
done

echo "=== a broken program gets a located diagnostic ==="
sed 's/tensor<32x64xf32>/tensor<32x48xf32>/' "$root/examples/mlp_1d.mlir" |
  "$opt" - 2>&1 >/dev/null | head -n 2 || true
