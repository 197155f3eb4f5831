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
  /// LLVM feature names (`avx2`, `avx512f`, ...): true if the CPU has it.
  llvm::StringMap<bool> features;

  bool has(llvm::StringRef feature) const { return features.lookup(feature); }
  /// The features as an LLVM feature string list (`+avx2`, `-avx512f`).
  std::vector<std::string> featureFlags() const;
};

/// The CPU called `name`: `native` (the host, with the features it
/// reports) or an LLVM x86-64 CPU name (`haswell`, `skylake-avx512`,
/// `x86-64-v3`, ...). An unknown name is an error listing some valid ones.
llvm::Expected<TargetCpu> lookupTargetCpu(llvm::StringRef name);

/// The features `cpu` has that `host` (as llvm::sys::getHostCPUFeatures
/// reports them) lacks, sorted. Features the host map does not name are
/// not counted: the host query only knows what cpuid can tell.
std::vector<std::string> missingFeatures(const TargetCpu &cpu,
                                         const llvm::StringMap<bool> &host);

/// lookupTargetCpu, and an error naming the missing features if this host
/// cannot run code compiled for the CPU.
llvm::Expected<TargetCpu> lookupRunnableTargetCpu(llvm::StringRef name);

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

/// The tiles for `cpu`'s vector registers and caches of `caches`:
/// AVX-512 (32 zmm of 16 f32): 8 x 32, 16 accumulators; AVX (16 ymm of 8):
/// 6 x 16, 12 accumulators; SSE (16 xmm of 4): 6 x 8. KC (at most 512)
/// makes a KC x NR panel of B fill at most the L1d; MC, a power of two,
/// makes an MC x KC block of A at most a quarter of the L2; NC = 1024.
ContractionTiles contractionTilesFor(const TargetCpu &cpu, CacheSizes caches);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_TARGETCPU_H
