#!/usr/bin/python3
"""Runs the shell and Python blocks of the docs as written and compares
shown outputs.

Usage: scripts/check_docs.py --build DIR [--root DIR] [--timeout S] [FILE...]

The documents are README.md and docs/*.md of the repository (--root,
default: this script's repository), or the FILEs given (paths relative to
the root). Their commands are written to run from the repository root after
`scripts/build.sh`, which builds into build/: tools as build/bin/NAME,
Python as `PYTHONPATH=python /usr/bin/python3`.

Every ```sh, ```bash or ```shell block runs with bash
(`set -euo pipefail`, so any failing command fails the block), every
```python block with `PYTHONPATH=python /usr/bin/python3` (an exception
fails the block; Debian's Python, which has numpy), each in a scratch
directory that holds a symlink to every top-level entry of the root and
`build` linking to --build, so that the files the commands write land in
the scratch directory and the tree stays clean. The blocks of one document
run in order in one scratch directory (a later block may use the files of
an earlier one); each document gets its own. overlap-run's compile cache
is the build's (`$OVERLAP_CACHE_DIR`, default: compile-cache in the build
directory).

A block without a language tag right after a block that runs (only blank
lines between) is that block's output: the combined stdout and stderr must match
it line by line, trailing spaces ignored, where `...` inside a line matches
any text and a line that is only `...` matches any number of lines.

An HTML comment on the lines just before a block steers the check:
  <!-- docs-check: skip (why) -->  do not run this block, or do not
                                    compare this output block
The reason is required. A ```console block (prompts and output mixed) is
refused: the command goes in a shell block, its output in the block after.
Relative links ([text](path#anchor)) must name a
file or directory inside the repository, and an anchor a heading of the
linked document.

Exit status: 0 when every block ran and matched, 1 otherwise, 2 for a usage
error.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHELL_LANGS = {"sh", "bash", "shell"}
PYTHON_LANGS = {"python"}
RUN_LANGS = SHELL_LANGS | PYTHON_LANGS
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*docs-check:(.*?)-->\s*$")
DIRECTIVE = re.compile(r"^\s*([\w-]+)\s*(?:\((.*)\))?\s*$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


class Block:
    def __init__(self, path, line, lang, text, skip):
        self.path = path
        self.line = line  # 1-based line of the opening fence
        self.lang = lang
        self.text = text
        self.skip = skip  # the reason, or None
        self.output = None  # the Block shown as this block's output


def parse(path, rel, errors):
    """The fenced blocks of a markdown file, with their markers."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    pending = None  # (line, reason) of a marker waiting for its block
    previous_end = None  # line index after the last closing fence
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            d = DIRECTIVE.match(m.group(1))
            if not d or d.group(1) != "skip":
                errors.append(f"{rel}:{i + 1}: unknown docs-check marker "
                              f"'{m.group(1).strip()}' (known: skip (why))")
            elif not (d.group(2) or "").strip():
                errors.append(f"{rel}:{i + 1}: docs-check: skip needs a "
                              "reason: <!-- docs-check: skip (why) -->")
            else:
                pending = (i + 1, d.group(2).strip())
            i += 1
            continue
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip() and pending:
                errors.append(f"{rel}:{pending[0]}: docs-check marker not "
                              "followed by a code block")
                pending = None
            i += 1
            continue
        start = i
        body = []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            errors.append(f"{rel}:{start + 1}: unclosed code block")
            break
        margin = len(m.group(1))
        text = "\n".join(l[margin:] if l[:margin].isspace() else l
                         for l in body)
        block = Block(rel, start + 1, m.group(2), text,
                      pending[1] if pending else None)
        if block.lang == "console":
            errors.append(f"{rel}:{start + 1}: a console block is not run: "
                          "put the commands in an sh block and their output "
                          "in an untagged block right after it")
        pending = None
        between = lines[previous_end:start] if previous_end is not None else []
        if (block.lang == "" and blocks and blocks[-1].lang in RUN_LANGS
                and all(not l.strip() or MARKER.match(l) for l in between)):
            blocks[-1].output = block
        else:
            blocks.append(block)
        i += 1
        previous_end = i
    if pending:
        errors.append(f"{rel}:{pending[0]}: docs-check marker not followed "
                      "by a code block")
    return blocks, lines


def output_regex(shown):
    """A regex of the full output that the shown output stands for."""
    parts = []
    for line in shown.strip("\n").split("\n"):
        line = line.rstrip()
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append("[^\n]*".join(re.escape(p) for p in line.split("..."))
                         + r"\n")
    return re.compile("".join(parts))


def normalize(output):
    lines = [l.rstrip() for l in output.split("\n")]
    return "\n".join(lines).strip("\n") + "\n"


def slug(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    result = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_code = not in_code
            elif not in_code and line.startswith("#"):
                result.add(slug(line.lstrip("#")))
    return result


def check_links(root, rel, lines, errors):
    in_code = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_code = not in_code
        if in_code:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            here = os.path.dirname(os.path.join(root, rel))
            path = os.path.normpath(os.path.join(here, file)) if file else \
                os.path.join(root, rel)
            if os.path.isabs(file) or os.path.relpath(path, root).startswith(".."):
                errors.append(f"{rel}:{number}: link '{target}' leaves the "
                              "repository")
            elif not os.path.exists(path):
                errors.append(f"{rel}:{number}: link '{target}': no such file")
            elif anchor and path.endswith(".md") and anchor not in anchors(path):
                errors.append(f"{rel}:{number}: link '{target}': no heading "
                              f"'{anchor}' in {os.path.relpath(path, root)}")


def scratch_dir(root, build):
    """A directory that looks like the repository root with build/ built."""
    scratch = tempfile.mkdtemp(prefix="check-docs-")
    for name in os.listdir(root):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    os.symlink(build, os.path.join(scratch, "build"))
    return scratch


def command(block):
    """The command line that runs a block's text."""
    if block.lang in PYTHON_LANGS:
        return ["/usr/bin/python3", "-c", block.text]
    return ["bash", "-c", "set -euo pipefail\n" + block.text]


def run(block, cwd, timeout):
    """(ok, output, seconds) of one shell or Python block."""
    env = dict(os.environ)
    # Keep Python from writing __pycache__ into the (linked) source tree and
    # plots from looking for a display.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["MPLBACKEND"] = "Agg"
    if block.lang in PYTHON_LANGS:
        env["PYTHONPATH"] = "python"
        # Prints and tracebacks in the order a terminal shows them.
        env["PYTHONUNBUFFERED"] = "1"
    start = time.monotonic()
    proc = subprocess.Popen(command(block),
                            cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        output = None
    finally:
        # A block's commands run in a session of their own: end all of them
        # on a timeout, and when the check itself is stopped (ctest's
        # timeout, ^C), so that no build or run outlives it.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if output is None:
        output, _ = proc.communicate()
        return False, output + f"\n(timed out after {timeout} s)\n", \
            time.monotonic() - start
    return proc.returncode == 0, output + \
        ("" if proc.returncode == 0 else f"\n(exit status {proc.returncode})\n"), \
        time.monotonic() - start


def indent(text, limit=60):
    lines = text.rstrip("\n").split("\n")
    if len(lines) > limit:
        lines = lines[:limit] + [f"(... {len(lines) - limit} more lines)"]
    return "\n".join("    | " + l for l in lines)


def main():
    parser = argparse.ArgumentParser(
        description="Run the docs' shell and Python blocks and compare shown "
        "outputs.")
    parser.add_argument("--root", default=os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--build", required=True,
                        help="build directory, seen by the blocks as build/")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds per block (default 120)")
    parser.add_argument("files", nargs="*",
                        help="documents relative to the root (default: "
                        "README.md and docs/*.md)")
    args = parser.parse_args()
    # SIGTERM (ctest's timeout) unwinds like ^C: the running block's
    # processes are ended and the scratch directory removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    root = os.path.abspath(args.root)
    build = os.path.abspath(args.build)
    if not os.path.isdir(os.path.join(build, "bin")):
        parser.error(f"{build} is not a build directory (no bin/)")
    # overlap-run's compile cache: the build's, not the user's home.
    os.environ.setdefault("OVERLAP_CACHE_DIR",
                          os.path.join(build, "compile-cache"))
    files = args.files or ["README.md"] + sorted(
        "docs/" + n for n in os.listdir(os.path.join(root, "docs"))
        if n.endswith(".md"))

    errors = []
    documents = []
    for rel in files:
        if not os.path.isfile(os.path.join(root, rel)):
            parser.error(f"no such document: {rel}")
        blocks, lines = parse(os.path.join(root, rel), rel, errors)
        check_links(root, rel, lines, errors)
        runnable = [b for b in blocks if b.lang in RUN_LANGS]
        for b in blocks:
            if b.lang not in RUN_LANGS and b.skip:
                errors.append(f"{rel}:{b.line}: docs-check: skip on a block "
                              "that is neither a shell or Python block nor "
                              "its output")
        documents.append((rel, runnable))

    total = sum(len(r) for _, r in documents)
    ran = skipped = compared = 0
    started = time.monotonic()
    index = 0
    for rel, runnable in documents:
        if not runnable:
            continue
        scratch = scratch_dir(root, build)
        try:
            for block in runnable:
                index += 1
                where = f"{block.path}:{block.line}"
                if block.skip:
                    skipped += 1
                    print(f"[{index}/{total}] {where}: skipped ({block.skip})",
                          flush=True)
                    continue
                ok, output, seconds = run(block, scratch, args.timeout)
                ran += 1
                status = f"ran in {seconds:.1f} s"
                if not ok:
                    errors.append(f"{where}: the block failed:\n"
                                  f"{indent(block.text)}\n  output:\n"
                                  f"{indent(output)}")
                    status = "FAILED"
                elif block.output and block.output.skip:
                    status += f", output not compared ({block.output.skip})"
                elif block.output:
                    compared += 1
                    if output_regex(block.output.text).fullmatch(
                            normalize(output)):
                        status += ", output matches"
                    else:
                        errors.append(
                            f"{where}: the output differs from the one shown "
                            f"at {block.output.path}:{block.output.line}:\n"
                            f"  shown:\n{indent(block.output.text)}\n"
                            f"  actual:\n{indent(output)}")
                        status = "OUTPUT DIFFERS"
                print(f"[{index}/{total}] {where}: {status}", flush=True)
        finally:
            shutil.rmtree(scratch)

    print(f"check_docs: {len(documents)} documents, {ran} blocks run "
          f"({compared} outputs compared), {skipped} skipped, "
          f"{time.monotonic() - started:.1f} s")
    for e in errors:
        print(f"check_docs: error: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
