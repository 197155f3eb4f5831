#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus: every MLIR input of test/ and examples/,
split into its `// -----` cases, full-line comments (RUN and CHECK lines)
dropped, one file per distinct case named by its hash.

Usage: seed-corpus.py OUT_DIR [REPO_ROOT]
"""
import hashlib
import pathlib
import sys


def cases(path):
    text = path.read_text(errors="replace")
    for case in text.split("// -----"):
        lines = [l for l in case.splitlines() if not l.lstrip().startswith("//")]
        case = "\n".join(lines).strip()
        if case:
            yield case + "\n"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    root = pathlib.Path(sys.argv[2] if len(sys.argv) == 3 else
                        pathlib.Path(__file__).resolve().parents[2])
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for directory in ("test", "examples"):
        for path in sorted((root / directory).rglob("*.mlir")):
            for case in cases(path):
                name = hashlib.sha1(case.encode()).hexdigest()
                target = out / name
                if not target.exists():
                    target.write_text(case)
                    written += 1
    print(f"seed-corpus: {written} new inputs in {out}")


if __name__ == "__main__":
    main()
