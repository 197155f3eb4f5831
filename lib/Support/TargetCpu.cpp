//===- TargetCpu.cpp - The x86-64 CPU code is generated for ---------------===//

#include "OverlapDialect/Support/TargetCpu.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <algorithm>
#include <unistd.h>

using namespace llvm;

std::vector<std::string> overlap::TargetCpu::featureFlags() const {
  std::vector<std::string> flags;
  for (const auto &feature : features)
    flags.push_back((feature.getValue() ? "+" : "-") + feature.getKey().str());
  llvm::sort(flags);
  return flags;
}

overlap::TargetCpu overlap::hostCpu() {
  return {sys::getHostCPUName().str(), sys::getHostCPUFeatures()};
}

/// LLVM's model of a CPU lists its features without those they imply
/// (x86-64-v3 lists avx2 but not avx, x86-64-v4 avx512bw but not avx512f);
/// code for the CPU may use them all.
static StringMap<bool> modelFeatures(StringRef name) {
  SmallVector<StringRef> listed;
  X86::getFeaturesForCPU(name, listed);
  StringMap<bool> features;
  for (StringRef feature : listed) {
    features[feature] = true;
    X86::updateImpliedFeatures(feature, /*Enabled=*/true, features);
  }
  return features;
}

Expected<overlap::TargetCpu> overlap::lookupTargetCpu(StringRef name,
                                                      const TargetCpu &host) {
  // The host's map is kept as cpuid reports it: it names every feature, the
  // implied ones included, and clears those the OS does not enable.
  if (name == "native")
    return host;
  if (X86::parseArchX86(name, /*Only64Bit=*/true) == X86::CK_None) {
    // The nearest valid name, as a hint for a typo.
    SmallVector<StringRef> valid;
    X86::fillValidCPUArchList(valid, /*Only64Bit=*/true);
    StringRef nearest;
    unsigned best = ~0u;
    for (StringRef candidate : valid) {
      unsigned distance = name.edit_distance(candidate);
      if (distance < best)
        best = distance, nearest = candidate;
    }
    std::string hint = nearest.empty() || best > name.size() / 2
                           ? std::string()
                           : " (did you mean '" + nearest.str() + "'?)";
    return createStringError(
        "unknown target CPU '" + name + "'" + hint +
        "; expected native or an x86-64 CPU name of LLVM, e.g. haswell, "
        "skylake-avx512, znver4, x86-64-v3");
  }
  return TargetCpu{name.str(), modelFeatures(name)};
}

/// The features of LLVM's CPU models that a host need not have to run code
/// compiled for them: instructions about the machine rather than a
/// computation, which code generation emits only for their intrinsics (and
/// overlap's lowering calls none), and which hosts that run the rest of a
/// CPU's instruction set often lack: hypervisors and microcode hide invpcid,
/// TSX and rdseed, the OS may not enable sgx, shstk, pku or fsgsbase. (LLVM
/// 22 has no `hle`.) A deny-list rather than an allow-list of instruction
/// sets, so that a feature a later LLVM adds is checked: a missing entry
/// then refuses a runnable target by name instead of letting code stop on
/// an instruction the host lacks (SIGILL). Checked stay the x86-64 levels'
/// sets, the vector extensions (AVX-512, AVX10, AMX, AVX-VNNI, ...), AMD's
/// fma4, xop, sse4a and tbm, the scalar and crypto extensions (bmi, adx,
/// aes, sha, gfni, ...), APX and the user-mode state saves (xsave, xsavec,
/// xsaveopt).
static bool isSystemFeature(StringRef feature) {
  static constexpr StringLiteral systemFeatures[] = {
      // Privileged, or for the OS to set up: TLB, MSRs, key and enclave
      // management, shadow stacks, protection keys, user interrupts,
      // profiling.
      "enqcmd", "fsgsbase", "hreset", "invpcid", "kl", "lwp", "pconfig", "pku",
      "sgx", "shstk", "uintr", "usermsr", "wbnoinvd", "widekl", "xsaves",
      // Transactional memory.
      "rtm", "tsxldtrk",
      // Processor ids, tracing, waits and serialization.
      "mwaitx", "ptwrite", "rdpid", "rdpru", "serialize", "waitpkg",
      // Random numbers.
      "rdrnd", "rdseed",
      // Cache-line control and direct stores.
      "cldemote", "clflushopt", "clwb", "clzero", "movdir64b", "movdiri",
      "prefetchi"};
  return llvm::is_contained(systemFeatures, feature);
}

std::vector<std::string> overlap::missingFeatures(const TargetCpu &cpu,
                                                  const TargetCpu &host) {
  std::vector<std::string> missing;
  for (const auto &feature : cpu.features) {
    auto it = host.features.find(feature.getKey());
    if (feature.getValue() && it != host.features.end() && !it->getValue() &&
        !isSystemFeature(feature.getKey()))
      missing.push_back(feature.getKey().str());
  }
  llvm::sort(missing);
  return missing;
}

Expected<overlap::TargetCpu>
overlap::lookupRunnableTargetCpu(StringRef name, const TargetCpu &host) {
  Expected<TargetCpu> cpu = lookupTargetCpu(name, host);
  if (!cpu)
    return cpu.takeError();
  std::vector<std::string> missing = missingFeatures(*cpu, host);
  if (!missing.empty())
    return createStringError("this host cannot run code for target CPU '" +
                             name + "': it lacks " + join(missing, ", "));
  return cpu;
}

overlap::CacheSizes overlap::hostCacheSizes() {
  CacheSizes sizes{32 << 10, 1 << 20};
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  // glibc reads them from cpuid; 0 or -1 when it cannot tell.
  if (long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE); l1d > 0)
    sizes.l1d = l1d;
  if (long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0)
    sizes.l2 = l2;
#endif
  return sizes;
}

overlap::ContractionTiles overlap::contractionTilesFor(const TargetCpu &cpu,
                                                       CacheSizes caches) {
  ContractionTiles tiles;
  // Accumulators + the NR-wide B vectors + one broadcast A element must fit
  // in the vector registers, leaving the loads room to run ahead.
  if (cpu.has("avx512f"))
    tiles.mr = 8, tiles.nr = 32; // 16 + 2 + 1 of 32 zmm
  else if (cpu.has("avx"))
    tiles.mr = 6, tiles.nr = 16; // 12 + 2 + 1 of 16 ymm
  else
    tiles.mr = 6, tiles.nr = 8; // 12 + 2 + 1 of 16 xmm
  constexpr int64_t f32Bytes = 4;
  // A KC x NR panel of B stays in the L1d for the MC / MR tiles that reuse
  // it. Up to 512, which halves the passes over C against 256: with AVX2 on
  // a 32 KiB L1d, the 512 x 16 panel measured 2-5% faster (bench/einsum).
  tiles.kc = std::clamp<int64_t>(caches.l1d / (tiles.nr * f32Bytes) / 64 * 64,
                                 64, 512);
  // An MC x KC block of A shares the L2 with the B block streaming through.
  // A power of two, not a multiple of MR, so that MC divides the
  // power-of-two row counts of usual shapes: the M remainder is then one
  // register tile per MC rows, which reuses the B panel hot in the L1d,
  // rather than a block of a few rows that streams the whole KC x NC B
  // block through the L2 again (with AVX2's MR = 6, KC = 256 and MC = 252,
  // M = 256 was 2-5% slower than with MC = 256).
  tiles.mc = std::clamp<int64_t>(
      llvm::bit_floor(uint64_t(caches.l2 / 4 / (tiles.kc * f32Bytes))),
      tiles.mr, 1024);
  tiles.nc = 1024;
  return tiles;
}
