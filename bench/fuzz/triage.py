"""Names a crash by its stack: the signature that deduplicates findings and
whose code it is (overlap's or upstream's).

A report is the stderr of a sanitized tool or of overlap-fuzz replaying a
finding: AddressSanitizer's and UndefinedBehaviorSanitizer's stacks
("#3 0x... in mlir::ovl::foo(...) /path/file.cpp:12:3") or LLVM's own
("#3 0x... mlir::ovl::foo(...) (/path/lib.so+0x...)"). The signature is
the kind of failure and the first few frames above the runtime's own
(signal handlers, sanitizer internals, libc's abort), without addresses,
arguments or line numbers: the same bug found from two inputs gets one.
"""
import re

FRAMES = 3
_FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ (?:in )?(.*)$")
# Frames of the machinery that reports, not of the code that failed.
_RUNTIME = re.compile(
    r"__sanitizer|__asan|__ubsan|__interceptor|___interceptor|"
    r"llvm::sys::|SignalHandler|PrintStackTrace|CrashRecoveryContext|"
    r"^(abort|raise|__GI_|__libc_|__pthread_kill|pthread_kill|"
    r"gsignal|__assert_fail|__fortify_fail|__chk_fail)|"
    r"llvm::report_fatal_error|llvm::llvm_unreachable_internal|"
    r"fuzzer::|LLVMFuzzerTestOneInput|_start$|libc\.so|ld-linux")
_KINDS = [
    ("timeout", re.compile(r"ERROR: libFuzzer: timeout|timed out after")),
    ("out-of-memory", re.compile(r"ERROR: libFuzzer: out-of-memory|"
                                 r"out of memory|std::bad_alloc")),
    ("ubsan", re.compile(r"runtime error: ([^\n]*)")),
    ("asan", re.compile(r"ERROR: AddressSanitizer: ([\w-]+)")),
    ("assertion", re.compile(r"Assertion `([^']*)' failed")),
    ("fatal", re.compile(r"LLVM ERROR: ([^\n]*)")),
    ("signal", re.compile(r"(SIG[A-Z]+|Segmentation fault|deadly signal)")),
]


def _function(text):
    """The function of a frame: no arguments, template arguments or
    offsets, so that two builds and two inputs name it alike."""
    text = re.sub(r"\s+/\S+$|\s+\(\S+\)$", "", text.strip())
    depth, out = 0, []
    for c in text:
        if c in "(<":
            depth += 1
        elif c in ")>":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(c)
    return re.sub(r"\+0x[0-9a-f]+$", "", "".join(out)).strip()


def frames(report):
    """The (function, location) of each frame of the first stack in
    `report`, innermost first, the runtime's own left out."""
    result, seen_first = [], False
    for line in report.splitlines():
        match = _FRAME.match(line)
        if not match:
            if seen_first and result:
                break
            continue
        if match.group(1) == "0" and seen_first and result:
            break
        seen_first = True
        rest = match.group(2)
        function = _function(rest)
        # A frame without a symbol names nothing two builds share.
        if _RUNTIME.search(rest) or not function:
            continue
        location = re.search(r"(/\S+?)(:\d+)*(?::\d+)?\)?$", rest)
        result.append((function, location.group(1) if location else ""))
    return result


def kind(report):
    """What failed: the first kind whose words the report holds, with its
    detail ("ubsan: division by zero")."""
    for name, pattern in _KINDS:
        match = pattern.search(report)
        if match:
            detail = match.group(1) if match.groups() else ""
            # Numbers differ between inputs of one bug.
            detail = re.sub(r"-?\b\d+\b|0x[0-9a-f]+", "N", detail)[:80]
            return f"{name}: {detail}" if detail else name
    return "crash"


# The MLIR 22 crashes of docs/UpstreamIssues.md, by a function of their
# stacks (or the words they die with): known, documented, not findings.
KNOWN_UPSTREAM = {
    "mlir::linalg::TransposeOp::parse":
        "linalg.transpose parser (docs/UpstreamIssues.md)",
    "SmallVector unable to grow":
        "tensor.from_elements of 2^32 elements (docs/UpstreamIssues.md)",
    "mlir::shard::AllSliceOp::verifySymbolUses":
        "shard.all_slice on an empty grid axis (docs/UpstreamIssues.md)",
}


def known_upstream(report):
    """The documented upstream crash `report` is, or None."""
    names = [function for function, _ in frames(report)]
    for key, what in KNOWN_UPSTREAM.items():
        if key in names or key in report.split("Stack dump")[0]:
            return what
    return None


def top_frames(report):
    """The first FRAMES functions of the stack, innermost first."""
    top = [function for function, _ in frames(report)[:FRAMES]]
    return " < ".join(top or ["no stack"])


def signature(report):
    """The kind and the first FRAMES frames: one line per distinct bug."""
    return kind(report) + " | " + top_frames(report)


def owner(report, repo_root):
    """"ours" when one of the innermost frames is overlap's code (a file of
    the repository, or a function of its namespaces), else "upstream": a
    crash deep in MLIR called from overlap's main is MLIR's."""
    for function, location in frames(report)[:FRAMES + 2]:
        if (location.startswith(str(repo_root)) or
                re.match(r"(mlir::ovl|overlap|ovlrt)::", function)):
            return "ours"
    return "upstream"


def main(argv=None):
    """triage.py REPO_ROOT REPORT...: one line per distinct signature of
    the reports (a finding's replay each), with how many share it, whose
    code it is, and one report; exit status 1 when one is not a known
    upstream crash."""
    import argparse
    import pathlib
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("root")
    parser.add_argument("reports", nargs="*", type=pathlib.Path)
    args = parser.parse_args(argv)
    groups = {}
    for path in args.reports:
        report = path.read_text(errors="replace")
        sig = signature(report)
        entry = groups.setdefault(sig, [0, path, report])
        entry[0] += 1
    status = 0
    for sig, (count, path, report) in sorted(groups.items()):
        upstream = known_upstream(report)
        who = f"known upstream: {upstream}" if upstream else \
            owner(report, args.root)
        status |= upstream is None
        print(f"triage: x{count} [{who}] {sig} (e.g. {path.name})")
    return int(status)


if __name__ == "__main__":
    import sys
    sys.exit(main())
