"""Unit tests of triage.py: one signature per bug whatever the input, the
reporting machinery left out, the owner and the known upstream crashes
recognised (test/Bench/fuzz-triage.test runs them)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import triage  # noqa: E402

ROOT = "/src/overlap"

# One UBSan division by zero in overlap's simulator, reached from two
# inputs: other addresses, arguments, template arguments and lines.
UBSAN_A = f"""\
{ROOT}/lib/Simulator/Machine.cpp:120:7: runtime error: division by zero
    #0 0x55d1 in mlir::ovl::planRing(long, int) {ROOT}/lib/Simulator/Machine.cpp:120:7
    #1 0x55d2 in mlir::ovl::planCollective(mlir::ovl::Step const&) {ROOT}/lib/Simulator/Machine.cpp:300:3
    #2 0x55d3 in mlir::ovl::Simulation::run() {ROOT}/lib/Simulator/Simulation.cpp:80:5
    #3 0x55d4 in main {ROOT}/tools/overlap-sim/overlap-sim.cpp:250:10
    #4 0x7f00 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x2724a)
"""
UBSAN_B = UBSAN_A.replace("0x55d", "0x61a").replace(":120:7", ":121:9") \
    .replace("(long, int)", "(long long, unsigned int)")

ASAN = f"""\
==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x1
    #0 0x4a in __asan_memcpy (/usr/lib/llvm-22/lib/libclang_rt.asan.so+0x1)
    #1 0x4b in mlir::ovl::Context::close() {ROOT}/lib/CAPI/Context.cpp:40:3
    #2 0x4c in overlapContextDestroy {ROOT}/lib/CAPI/Context.cpp:90:1
0x6020 is located 0 bytes inside of 16-byte region
freed by thread T1 here:
    #0 0x5a in operator delete(void*) (/usr/lib/libclang_rt.asan.so+0x2)
    #1 0x5b in somethingElse() /elsewhere/x.cpp:1:1
"""

# LLVM's own stack dump of an upstream parser crash: no "in", a library
# and an offset in place of a file.
UPSTREAM = """\
Stack dump:
0.\tProgram arguments: overlap-opt f.mlir
 #0 0x00007f1 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (/usr/lib/llvm-22/lib/libLLVM.so.22.1+0x1)
 #1 0x00007f2 SignalHandler(int, siginfo_t*, void*) (/usr/lib/llvm-22/lib/libLLVM.so.22.1+0x2)
 #2 0x00007f3 mlir::linalg::TransposeOp::parse(mlir::OpAsmParser&, mlir::OperationState&) (/usr/lib/llvm-22/lib/libMLIR.so.22.1+0x3)
 #3 0x00007f4 mlir::detail::Parser::parseOperation() (/usr/lib/llvm-22/lib/libMLIR.so.22.1+0x4)
Segmentation fault
"""

DEEP_IN_MLIR = """\
LLVM ERROR: can't create Attribute 'x' because storage uniquer isn't initialized
 #0 0x1 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (/usr/lib/libLLVM.so+0x1)
 #1 0x2 abort (/lib/x86_64-linux-gnu/libc.so.6+0x2)
 #2 0x3 mlir::StorageUniquer::getParametricStorageTypeImpl() (/usr/lib/libMLIR.so+0x3)
 #3 0x4 mlir::IntegerAttr::get(mlir::Type, long) (/usr/lib/libMLIR.so+0x4)
 #4 0x5 mlir::Builder::getI64IntegerAttr(long) (/usr/lib/libMLIR.so+0x5)
 #5 0x6 mlir::Builder::getIndexAttr(long) (/usr/lib/libMLIR.so+0x6)
 #6 0x7 mlir::arith::ConstantIndexOp::build() (/usr/lib/libMLIR.so+0x7)
 #7 0x8 mlir::OpBuilder::create() (/usr/lib/libMLIR.so+0x8)
 #8 0x9 main (/bin/overlap-opt+0x9)
"""


def test_one_bug_from_two_inputs_has_one_signature():
    assert triage.signature(UBSAN_A) == triage.signature(UBSAN_B)
    assert triage.signature(UBSAN_A) == (
        "ubsan: division by zero | mlir::ovl::planRing < "
        "mlir::ovl::planCollective < mlir::ovl::Simulation::run")


def test_other_bugs_have_other_signatures():
    other = UBSAN_A.replace("planRing", "planTree")
    assert triage.signature(other) != triage.signature(UBSAN_A)
    assert triage.signature(ASAN) != triage.signature(UBSAN_A)


def test_the_reporting_machinery_is_left_out():
    assert triage.signature(ASAN) == (
        "asan: heap-use-after-free | mlir::ovl::Context::close < "
        "overlapContextDestroy")
    # Only the first stack: the "freed by" stack is another's.
    assert all(fn != "somethingElse" for fn, _ in triage.frames(ASAN))
    function, location = triage.frames(UPSTREAM)[0]
    assert function == "mlir::linalg::TransposeOp::parse"
    assert location.startswith("/usr/lib/llvm-22/lib/libMLIR.so")


def test_numbers_in_a_kind_are_normalised():
    assert triage.kind("runtime error: shift exponent 64 is too large") == \
        "ubsan: shift exponent N is too large"
    assert triage.kind("==1== ERROR: libFuzzer: timeout after 31 seconds") \
        == "timeout"
    assert triage.kind("no words of any kind") == "crash"


def test_owner_is_the_innermost_frames_code():
    assert triage.owner(UBSAN_A, ROOT) == "ours"
    assert triage.owner(DEEP_IN_MLIR, ROOT) == "upstream"
    # A function of overlap's namespaces counts without a file.
    named = UPSTREAM.replace("mlir::linalg::TransposeOp::parse",
                             "mlir::ovl::parseEinsum")
    assert triage.owner(named, ROOT) == "ours"


def test_documented_upstream_crashes_are_recognised():
    assert "linalg.transpose" in triage.known_upstream(UPSTREAM)
    assert triage.known_upstream(UBSAN_A) is None
    grow = "LLVM ERROR: SmallVector unable to grow. Requested capacity (N)\n"
    assert "from_elements" in triage.known_upstream(grow)


def test_main_groups_reports_and_fails_on_a_finding(tmp_path, capsys):
    for name, text in [("a", UBSAN_A), ("b", UBSAN_B), ("c", UPSTREAM)]:
        (tmp_path / name).write_text(text)
    status = triage.main([ROOT] + [str(tmp_path / n) for n in "abc"])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1
    assert len(lines) == 2
    assert any(line.startswith("triage: x2 [ours] ubsan: division by zero")
               for line in lines)
    assert any("x1 [known upstream: linalg.transpose" in line
               for line in lines)


def test_main_passes_when_every_report_is_known(tmp_path, capsys):
    (tmp_path / "c").write_text(UPSTREAM)
    assert triage.main([ROOT, str(tmp_path / "c")]) == 0
    assert "known upstream" in capsys.readouterr().out
