# -*- Python -*-
# lit configuration of the overlap test suite.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "OVERLAP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.overlap_obj_root, "test")
config.excludes = ["CMakeLists.txt", "Inputs", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%overlap_src_root", config.overlap_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# The sanitizers' options (scripts/sanitize.sh); the instrumented tools load
# the sanitizer runtime by their rpath, nothing else needs it.
llvm_config.with_system_environment(["ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS",
                                     "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()
# split-file, not, count and FileCheck come from the LLVM tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# overlap-run's compile cache (docs/Runtime.md): the suite's own, emptied
# when a run starts, never the user's ~/.cache. The tests of one run share
# it, so each program is compiled once per run; the cache's own tests
# (Runtime/compile-cache.test) use folders of their own.
import shutil
compile_cache = os.path.join(config.test_exec_root, "compile-cache")
shutil.rmtree(compile_cache, ignore_errors=True)
config.environment["OVERLAP_CACHE_DIR"] = compile_cache

tool_dirs = [config.overlap_tools_dir, config.llvm_tools_dir]
tools = ["overlap-opt", "overlap-run", "overlap-sim", "mlir-translate", "mlir-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The MPI transport (Runtime/mpi, `REQUIRES: mpi`): overlap-run under mpirun
# needs the plugin, built when CMake found an MPI, and that MPI's mpiexec.
# %mpirun starts it behind a timeout, so that a hang fails one test instead
# of stalling the suite. The timeout is no measure of speed: the slowest
# job, gpt-train-step.test's (4 ranks each compiling two GPT training steps
# at -O0), takes 17 s on 2 cores already busy (load 7), 32 s beside two
# CPU-bound processes and 37 s with another of the suite's jobs beside it
# too (scripts/stress-tests.sh runs the MPI tests so); 300 s is 8 times
# that.
mpirun_timeout_seconds = 300
if (config.ovlrt_mpi_plugin and os.path.exists(config.ovlrt_mpi_plugin)
        and config.mpiexec and os.path.exists(config.mpiexec)):
    mpirun = [config.mpiexec]
    version = subprocess.run([config.mpiexec, "--version"],
                             capture_output=True, text=True).stdout
    if "Open MPI" in version or "OpenRTE" in version:
        # Tests start more ranks than there are cores, and Open MPI refuses
        # to run as root (as in containers) without these variables.
        mpirun.append("--oversubscribe")
        config.available_features.add("openmpi")
        config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        # The transports, named rather than probed: ob1 over shared memory
        # (vader) between the ranks of this machine, TCP on the loopback
        # only as its fallback, and the launcher's channel on the loopback.
        # Probing also opens InfiniBand and libfabric components and every
        # network interface. Shared memory copies through its own segments
        # (no single copy by process_vm_readv, which containers' seccomp
        # profiles refuse). Environment variables, not mpirun flags: the
        # two-hosts test's script sets its own (TCP between namespaces).
        config.environment["OMPI_MCA_pml"] = "ob1"
        config.environment["OMPI_MCA_btl"] = "self,vader,tcp"
        config.environment["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
        config.environment["OMPI_MCA_btl_tcp_if_include"] = "lo"
        config.environment["OMPI_MCA_oob_tcp_if_include"] = "lo"
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "timeout %d " % mpirun_timeout_seconds + " ".join(mpirun)))

# A debugger that stops a rank inside an MPI call
# (Runtime/mpi/lost-in-creation.mlir); scripts/setup.sh installs gdb.
if shutil.which("gdb"):
    config.available_features.add("gdb")

# Two "hosts" on this machine (Runtime/mpi/two-hosts.test): network
# namespaces joined by a veth pair, which needs root, ip(8) and unshare(1).
if (os.geteuid() == 0 and shutil.which("ip") and shutil.which("unshare")
        and "openmpi" in config.available_features):
    probe = "ovlprobe%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", probe],
                      capture_output=True).returncode == 0:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
        config.available_features.add("netns")
        config.substitutions.append(
            ("%two-hosts", os.path.join(config.test_source_root, "Runtime",
                                        "mpi", "Inputs", "two-namespaces.sh")))

# Python-driven tests (the decomposition matrix) run with lit's interpreter,
# Debian's python3.
import sys
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%overlap_tools_dir", config.overlap_tools_dir))
# The execution matrices run a representative subset under the sanitizers:
# they look for memory errors, which the subset reaches, while the full
# matrices would take most of CI's time under instrumentation.
config.substitutions.append(("%quick_if_sanitized",
                             "--quick" if config.overlap_sanitize else ""))
if config.overlap_sanitize:
    config.available_features.add("sanitized")

# Other x86-64 hosts (AVX2 only, no AVX), emulated by QEMU's user mode
# (Runtime/emulated-hosts.test); scripts/setup.sh installs qemu-user.
if shutil.which("qemu-x86_64"):
    config.available_features.add("qemu-x86_64")

# A kernel that lets a process hold fewer than 2^17 memory mappings
# (Debian's default vm.max_map_count is 65530): 65536 device threads, a
# stack and a guard page each, cannot all start
# (Runtime/device-threads-mappings.test).
try:
    with open("/proc/sys/vm/max_map_count") as max_map_count:
        if int(max_map_count.read()) < 1 << 17:
            config.available_features.add("max-map-count-below-2to17")
except (OSError, ValueError):
    pass
