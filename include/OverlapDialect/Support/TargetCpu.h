//===- TargetCpu.h - The x86-64 CPU code is generated for ------*- C++ -*-===//
//
// One place that knows what a CPU name means for overlap's code: the LLVM
// CPU and features the JIT compiles for (overlap-run --target-cpu), whether
// the host can run that code, and the tiles of the contraction schedule
// (ContractionSchedule.mlir) that fit its vector registers and the host's
// caches.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_TARGETCPU_H
#define OVERLAPDIALECT_SUPPORT_TARGETCPU_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace overlap {

/// An x86-64 CPU: its LLVM name and the features code for it may use.
struct TargetCpu {
  /// The LLVM CPU name (for `native`, the host's, e.g. `znver4`).
  std::string name;
  /// LLVM feature names (`avx2`, `avx512f`, ...): true if code for the CPU
  /// may use it. The one source of what the JIT compiles for, whether a host
  /// can run it (missingFeatures) and which register tile it gets
  /// (contractionTilesFor).
  llvm::StringMap<bool> features;

  bool has(llvm::StringRef feature) const { return features.lookup(feature); }
  /// The features as an LLVM feature string list (`+avx2`, `-avx512f`).
  std::vector<std::string> featureFlags() const;
};

/// This host: LLVM's name for its CPU and the features cpuid reports and the
/// OS enables (llvm::sys::getHostCPUFeatures; false for those it lacks).
TargetCpu hostCpu();

/// The CPU called `name`: `native` (`host` as it is) or an LLVM x86-64 CPU
/// name (`haswell`, `skylake-avx512`, `x86-64-v3`, ...) with the features of
/// LLVM's model of it and every feature they imply (`x86-64-v3` lists avx2;
/// its code may use avx too). An unknown name is an error listing some
/// valid ones.
llvm::Expected<TargetCpu> lookupTargetCpu(llvm::StringRef name,
                                          const TargetCpu &host = hostCpu());

/// The instruction-set features `cpu` has that `host` lacks, sorted: those
/// code generation may use. System features (privileged, OS-enabled,
/// transactional-memory, trace, power, random-number and cache-control
/// instructions: invpcid, rtm, fsgsbase, sgx, rdseed, ...) are not counted:
/// nothing overlap compiles uses them, and hosts that run the CPU's code
/// often lack them (hypervisors and microcode hide them). Nor are features
/// the host's map does not name: cpuid cannot tell.
std::vector<std::string> missingFeatures(const TargetCpu &cpu,
                                         const TargetCpu &host);

/// lookupTargetCpu, and an error naming the missing features if `host`
/// cannot run code compiled for the CPU.
llvm::Expected<TargetCpu>
lookupRunnableTargetCpu(llvm::StringRef name,
                        const TargetCpu &host = hostCpu());

/// The tile sizes of the contraction schedule: an MR x NR register tile of
/// f32 accumulators, blocks of MC x NC x KC.
struct ContractionTiles {
  int64_t mr, nr, mc, nc, kc;
};

/// The host's data cache sizes in bytes (per core for L1d and L2).
struct CacheSizes {
  int64_t l1d, l2;
};

/// The host's caches, or 32 KiB and 1 MiB where the OS does not say.
CacheSizes hostCacheSizes();

/// The tiles for `cpu`'s vector registers and caches of `caches`: with
/// avx512f (32 zmm of 16 f32), 8 x 32, 16 accumulators; else with avx (16
/// ymm of 8; every later vector extension implies it), 6 x 16, 12
/// accumulators; else SSE (16 xmm of 4), 6 x 8. KC (at most 512)
/// makes a KC x NR panel of B fill at most the L1d; MC, a power of two,
/// makes an MC x KC block of A at most a quarter of the L2; NC = 1024.
ContractionTiles contractionTilesFor(const TargetCpu &cpu, CacheSizes caches);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_TARGETCPU_H
