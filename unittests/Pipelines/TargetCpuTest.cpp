//===- TargetCpuTest.cpp - Target CPUs and their contraction tiles --------===//

#include "OverlapDialect/Support/TargetCpu.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include "gtest/gtest.h"

#include <set>

using namespace overlap;

namespace {

TargetCpu lookup(llvm::StringRef name) {
  llvm::Expected<TargetCpu> cpu = lookupTargetCpu(name);
  EXPECT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  return cpu ? *cpu : TargetCpu();
}

TEST(TargetCpuTest, NamedCpusHaveTheirFeaturesAndTheImpliedOnes) {
  TargetCpu haswell = lookup("haswell");
  EXPECT_EQ(haswell.name, "haswell");
  EXPECT_TRUE(haswell.has("avx2"));
  EXPECT_TRUE(haswell.has("fma"));
  EXPECT_FALSE(haswell.has("avx512f"));
  EXPECT_TRUE(lookup("skylake-avx512").has("avx512f"));
  std::vector<std::string> flags = haswell.featureFlags();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "+avx2"), flags.end());
  // LLVM's model of x86-64-v3 lists avx2, x86-64-v4's avx512bw: what they
  // imply is there too.
  TargetCpu v3 = lookup("x86-64-v3");
  EXPECT_TRUE(v3.has("avx"));
  EXPECT_TRUE(v3.has("sse4.1"));
  EXPECT_FALSE(v3.has("avx512f"));
  TargetCpu v4 = lookup("x86-64-v4");
  EXPECT_TRUE(v4.has("avx512f"));
  EXPECT_TRUE(v4.has("avx"));
}

TEST(TargetCpuTest, UnknownNameSuggestsTheNearest) {
  llvm::Expected<TargetCpu> cpu = lookupTargetCpu("haswel");
  ASSERT_FALSE(bool(cpu));
  std::string message = llvm::toString(cpu.takeError());
  EXPECT_NE(message.find("unknown target CPU 'haswel'"), std::string::npos);
  EXPECT_NE(message.find("did you mean 'haswell'"), std::string::npos);
  // 32-bit only CPUs cannot run x86-64 code.
  llvm::Expected<TargetCpu> i386 = lookupTargetCpu("i386");
  ASSERT_FALSE(bool(i386));
  llvm::consumeError(i386.takeError());
}

/// A host as llvm::sys::getHostCPUFeatures reports one: every feature of
/// LLVM's CPU models named, true for those in `has` (separated by spaces);
/// `x87`, which cpuid's map does not name, left out.
TargetCpu fakeHost(llvm::StringRef name, llvm::StringRef has) {
  TargetCpu host{name.str(), {}};
  llvm::SmallVector<llvm::StringRef> models;
  llvm::X86::fillValidCPUArchList(models, /*Only64Bit=*/true);
  for (llvm::StringRef model : models)
    for (const auto &feature : lookup(model).features)
      host.features[feature.getKey()] = false;
  host.features.erase("x87");
  llvm::SmallVector<llvm::StringRef> present;
  llvm::SplitString(has, present);
  for (llvm::StringRef feature : present)
    host.features[feature] = true;
  return host;
}

/// This machine (AMD EPYC, Zen 5): getHostCPUFeatures' true features,
/// without fsgsbase, which its kernel does not report (/proc/cpuinfo).
/// AVX-512 but no invpcid, rdseed, pku, rdpid, shstk.
TargetCpu zen5Host() {
  return fakeHost(
      "znver5",
      "64bit adx aes avx avx2 avx512bf16 avx512bitalg avx512bw "
      "avx512cd avx512dq avx512f avx512ifma avx512vbmi avx512vbmi2 "
      "avx512vl avx512vnni avx512vp2intersect avx512vpopcntdq avxvnni "
      "bmi bmi2 clflushopt clwb clzero cmov crc32 cx16 cx8 f16c fma "
      "fxsr gfni lzcnt mmx movbe movdir64b movdiri pclmul popcnt "
      "prefetchi prfchw rdrnd sahf sha sse sse2 sse3 sse4.1 sse4.2 "
      "sse4a ssse3 vaes vpclmulqdq xsave xsavec xsaveopt");
}

/// `qemu-x86_64 -cpu Haswell-noTSX` (test/Runtime/emulated-hosts.test):
/// AVX2 and FMA, no AVX-512; its translator also drops invpcid.
TargetCpu haswellHost() {
  return fakeHost("haswell",
                  "64bit aes avx avx2 bmi bmi2 cmov crc32 cx16 cx8 f16c fma "
                  "fsgsbase fxsr lzcnt mmx movbe pclmul popcnt rdrnd sahf sse "
                  "sse2 sse3 sse4.1 sse4.2 ssse3 xsave xsaveopt");
}

/// `qemu-x86_64 -cpu Nehalem`: SSE4.2, no AVX.
TargetCpu nehalemHost() {
  return fakeHost(
      "nehalem", "64bit cmov crc32 cx16 cx8 fxsr mmx popcnt sahf sse sse2 sse3 "
                 "sse4.1 sse4.2 ssse3");
}

std::string lacks(const TargetCpu &cpu, const TargetCpu &host) {
  return llvm::join(missingFeatures(cpu, host), ", ");
}

TEST(TargetCpuTest,
     EachTargetGetsItsTileAndRunsWhereTheHostHasItsInstructions) {
  struct Row {
    llvm::StringRef target;
    int64_t mr, nr;
    // The features each host lacks ("": it runs the target's code).
    llvm::StringRef onZen5, onHaswell;
    bool runsOnNehalem;
  };
  const Row rows[] = {
      // The failure this test was written for: haswell's model lists
      // invpcid, which this Zen 5 lacks.
      {"haswell", 6, 16, "", "", false},
      // avx2 implies the avx the AVX2 tile needs.
      {"x86-64-v3", 6, 16, "", "", false},
      {"znver3", 6, 16, "", "adx, prfchw, sha, sse4a, vaes, vpclmulqdq, xsavec",
       false},
      {"x86-64-v4", 8, 32, "",
       "avx512bw, avx512cd, avx512dq, avx512f, avx512vl", false},
      {"skylake-avx512", 8, 32, "",
       "adx, avx512bw, avx512cd, avx512dq, avx512f, avx512vl, prfchw, "
       "xsavec",
       false},
      {"znver4", 8, 32, "",
       "adx, avx512bf16, avx512bitalg, avx512bw, avx512cd, avx512dq, "
       "avx512f, avx512ifma, avx512vbmi, avx512vbmi2, avx512vl, avx512vnni, "
       "avx512vpopcntdq, gfni, prfchw, sha, sse4a, vaes, vpclmulqdq, xsavec",
       false},
      {"znver5", 8, 32, "",
       "adx, avx512bf16, avx512bitalg, avx512bw, avx512cd, avx512dq, "
       "avx512f, avx512ifma, avx512vbmi, avx512vbmi2, avx512vl, avx512vnni, "
       "avx512vp2intersect, avx512vpopcntdq, avxvnni, gfni, prfchw, sha, "
       "sse4a, vaes, vpclmulqdq, xsavec",
       false},
      // Its AMX and AVX512-FP16 are instructions; its invpcid, pconfig, sgx,
      // tsxldtrk, waitpkg, ... are not counted.
      {"sapphirerapids", 8, 32, "amx-bf16, amx-int8, amx-tile, avx512fp16",
       "adx, amx-bf16, amx-int8, amx-tile, avx512bf16, avx512bitalg, "
       "avx512bw, avx512cd, avx512dq, avx512f, avx512fp16, avx512ifma, "
       "avx512vbmi, avx512vbmi2, avx512vl, avx512vnni, avx512vpopcntdq, "
       "avxvnni, gfni, prfchw, sha, vaes, vpclmulqdq, xsavec",
       false},
      // AMD's own extensions.
      {"bdver4", 6, 16, "fma4, tbm, xop", "fma4, prfchw, sse4a, tbm, xop",
       false},
      {"x86-64-v2", 6, 8, "", "", true},
      {"nehalem", 6, 8, "", "", true},
      {"x86-64", 6, 8, "", "", true},
  };
  TargetCpu zen5 = zen5Host(), haswell = haswellHost(), nehalem = nehalemHost();
  CacheSizes caches{32 << 10, 1 << 20};
  for (const Row &row : rows) {
    SCOPED_TRACE(row.target.str());
    TargetCpu cpu = lookup(row.target);
    ContractionTiles tiles = contractionTilesFor(cpu, caches);
    EXPECT_EQ(tiles.mr, row.mr);
    EXPECT_EQ(tiles.nr, row.nr);
    EXPECT_EQ(lacks(cpu, zen5), row.onZen5);
    EXPECT_EQ(lacks(cpu, haswell), row.onHaswell);
    EXPECT_EQ(lacks(cpu, nehalem).empty(), row.runsOnNehalem);
  }
  // `native` is the host, with the tile of the host's vector registers.
  for (const TargetCpu &host : {zen5, haswell, nehalem}) {
    llvm::Expected<TargetCpu> native = lookupRunnableTargetCpu("native", host);
    ASSERT_TRUE(bool(native)) << llvm::toString(native.takeError());
    EXPECT_EQ(native->name, host.name);
    ContractionTiles tiles = contractionTilesFor(*native, caches);
    EXPECT_EQ(tiles.nr, host.name == "znver5"    ? 32
                        : host.name == "haswell" ? 16
                                                 : 8);
  }
}

TEST(TargetCpuTest, RefusalNamesTheMissingInstructionSets) {
  llvm::Expected<TargetCpu> v4 =
      lookupRunnableTargetCpu("x86-64-v4", haswellHost());
  ASSERT_FALSE(bool(v4));
  EXPECT_EQ(llvm::toString(v4.takeError()),
            "this host cannot run code for target CPU 'x86-64-v4': it lacks "
            "avx512bw, avx512cd, avx512dq, avx512f, avx512vl");
  llvm::Expected<TargetCpu> haswell =
      lookupRunnableTargetCpu("haswell", zen5Host());
  EXPECT_TRUE(bool(haswell)) << llvm::toString(haswell.takeError());
}

TEST(TargetCpuTest, FeaturesTheHostMapDoesNotNameAreNotCounted) {
  TargetCpu host = haswellHost();
  ASSERT_TRUE(lookup("haswell").has("x87"));
  ASSERT_FALSE(host.features.contains("x87"));
  host.features["avx2"] = false;
  EXPECT_EQ(lacks(lookup("haswell"), host), "avx2");
}

/// Every feature of every LLVM CPU model is either an instruction set the
/// check counts (listed below) or a system feature it does not: a feature a
/// later LLVM adds fails this test until it is placed.
TEST(TargetCpuTest, EveryModelFeatureIsClassified) {
  // On a host without any feature, every counted one is missing.
  TargetCpu bare = fakeHost("bare", "");
  llvm::SmallVector<llvm::StringRef> models;
  llvm::X86::fillValidCPUArchList(models, /*Only64Bit=*/true);
  std::set<std::string> counted, named;
  for (llvm::StringRef model : models) {
    for (std::string &feature : missingFeatures(lookup(model), bare))
      counted.insert(std::move(feature));
    for (const auto &feature : lookup(model).features)
      named.insert(feature.getKey().str());
  }
  // The instruction sets, sorted.
  EXPECT_EQ(llvm::join(counted, " "),
            "adx aes amx-avx512 amx-bf16 amx-complex amx-fp16 amx-fp8 "
            "amx-int8 amx-movrs amx-tf32 amx-tile avx avx10.1 avx10.2 avx2 "
            "avx512bf16 avx512bitalg avx512bw avx512cd avx512dq avx512f "
            "avx512fp16 avx512ifma avx512vbmi avx512vbmi2 avx512vl avx512vnni "
            "avx512vp2intersect avx512vpopcntdq avxifma avxneconvert avxvnni "
            "avxvnniint16 avxvnniint8 bmi bmi2 ccmp cmov cmpccxadd crc32 cx16 "
            "cx8 egpr f16c fma fma4 fxsr gfni lzcnt mmx movbe movrs ndd nf "
            "pclmul popcnt ppx prfchw push2pop2 sahf sha sha512 sm3 sm4 sse "
            "sse2 sse3 sse4.1 sse4.2 sse4a ssse3 tbm vaes vpclmulqdq xop "
            "xsave xsavec xsaveopt zu");
  // And the system features are among the models' (not counted above).
  for (llvm::StringRef system :
       {"invpcid", "fsgsbase", "sgx", "rdpid", "ptwrite", "waitpkg", "rdseed",
        "tsxldtrk", "pku", "shstk", "xsaves"}) {
    EXPECT_TRUE(named.count(system.str())) << system.str();
    EXPECT_FALSE(counted.count(system.str())) << system.str();
  }
}

TEST(TargetCpuTest, TilesFitTheVectorRegistersAndCaches) {
  CacheSizes zen4{32 << 10, 1 << 20};
  ContractionTiles avx512 = contractionTilesFor(lookup("skylake-avx512"), zen4);
  EXPECT_EQ(avx512.mr, 8);
  EXPECT_EQ(avx512.nr, 32);
  EXPECT_EQ(avx512.kc, 256); // 256 x 32 f32 = 32 KiB of B panel
  EXPECT_EQ(avx512.mc, 256); // 256 x 256 f32 = 256 KiB of A block
  EXPECT_EQ(avx512.nc, 1024);
  ContractionTiles avx2 = contractionTilesFor(lookup("haswell"), zen4);
  EXPECT_EQ(avx2.mr, 6);
  EXPECT_EQ(avx2.nr, 16);
  EXPECT_EQ(avx2.kc, 512); // 512 x 16 f32 = 32 KiB of B panel
  EXPECT_EQ(avx2.mc, 128); // 128 x 512 f32 = 256 KiB of A block
  ContractionTiles sse = contractionTilesFor(lookup("x86-64"), zen4);
  EXPECT_EQ(sse.mr, 6);
  EXPECT_EQ(sse.nr, 8);
  EXPECT_EQ(sse.kc, 512);
  // An L2 of 1.25 MiB (Ice Lake server) leaves room for 213 rows of A by
  // 384 columns (48 KiB L1d); MC is rounded down to 128, which divides more
  // M (a power of two, not a multiple of MR).
  ContractionTiles icx =
      contractionTilesFor(lookup("icelake-server"), {48 << 10, 1280 << 10});
  EXPECT_EQ(icx.kc, 384);
  EXPECT_EQ(icx.mc, 128);
  // Small caches shrink the blocks, down to one register tile.
  ContractionTiles tiny = contractionTilesFor(lookup("haswell"), {4096, 4096});
  EXPECT_EQ(tiny.kc, 64);
  EXPECT_EQ(tiny.mc, 6);
}

} // namespace
