//===- TargetCpuTest.cpp - Target CPUs and their contraction tiles --------===//

#include "OverlapDialect/Support/TargetCpu.h"

#include "gtest/gtest.h"

using namespace overlap;

namespace {

TargetCpu lookup(llvm::StringRef name) {
  llvm::Expected<TargetCpu> cpu = lookupTargetCpu(name);
  EXPECT_TRUE(bool(cpu)) << llvm::toString(cpu.takeError());
  return cpu ? *cpu : TargetCpu();
}

TEST(TargetCpuTest, NamedCpusHaveTheirFeatures) {
  TargetCpu haswell = lookup("haswell");
  EXPECT_EQ(haswell.name, "haswell");
  EXPECT_TRUE(haswell.has("avx2"));
  EXPECT_TRUE(haswell.has("fma"));
  EXPECT_FALSE(haswell.has("avx512f"));
  EXPECT_TRUE(lookup("skylake-avx512").has("avx512f"));
  std::vector<std::string> flags = haswell.featureFlags();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "+avx2"), flags.end());
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

TEST(TargetCpuTest, MissingFeaturesAreThoseTheHostReportsAbsent) {
  TargetCpu skylake = lookup("skylake-avx512");
  // An AVX2 host: no AVX-512, no protection keys; it does not report on
  // `x87` at all, which is therefore not counted.
  llvm::StringMap<bool> host;
  for (const auto &feature : lookup("haswell").features)
    host[feature.getKey()] = true;
  host["avx512f"] = host["avx512bw"] = host["pku"] = false;
  host.erase("x87");
  std::vector<std::string> missing = missingFeatures(skylake, host);
  EXPECT_EQ(missing, (std::vector<std::string>{"avx512bw", "avx512f", "pku"}));
  EXPECT_TRUE(missingFeatures(lookup("haswell"), host).empty());
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
