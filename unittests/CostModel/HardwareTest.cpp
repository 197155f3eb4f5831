//===- HardwareTest.cpp - Tests of hardware descriptions ------------------===//
//
// Built-in lookup, the wrap-around rule, and hardware files: a valid one
// round-trips, and each kind of mistake gets an error naming the file and the
// field.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Hardware.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;

namespace {

TEST(HardwareTest, BuiltinsAreFoundAndValid) {
  for (llvm::StringRef name : builtinHardwareNames()) {
    SCOPED_TRACE(name.str());
    std::optional<HardwareDescription> hw = lookupHardware(name);
    ASSERT_TRUE(hw);
    EXPECT_EQ(hw->name, name);
    llvm::Error err = verifyHardware(*hw);
    EXPECT_FALSE(err) << llvm::toString(std::move(err));
  }
}

TEST(HardwareTest, TpuV4Figures) {
  std::optional<HardwareDescription> hw = lookupHardware("tpu-v4");
  ASSERT_TRUE(hw);
  EXPECT_DOUBLE_EQ(hw->peak(ElementKind::BF16), 275e12);
  EXPECT_DOUBLE_EQ(hw->peak(ElementKind::F32), 275e12 / 6);
  EXPECT_DOUBLE_EQ(hw->hbmBandwidth, 1.2e12);
  EXPECT_DOUBLE_EQ(hw->hbmCapacity, 32.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(hw->linkBandwidth, 45e9);
  EXPECT_EQ(hw->linksPerChip, 6u);
  EXPECT_DOUBLE_EQ(hw->hopLatency, 1e-6);
  EXPECT_EQ(hw->interconnect, InterconnectKind::Torus);
  EXPECT_EQ(hw->torusRank, 3u);
}

TEST(HardwareTest, DerivedLinkBandwidths) {
  // 1600 Gb/s over 4 links and 4800 Gb/s over 6 links, one direction each.
  EXPECT_DOUBLE_EQ(lookupHardware("tpu-v5e")->linkBandwidth, 50e9);
  EXPECT_EQ(lookupHardware("tpu-v5e")->torusRank, 2u);
  EXPECT_DOUBLE_EQ(lookupHardware("tpu-v5p")->linkBandwidth, 100e9);
  // 900 GB/s both ways through NVSwitch: 450 GB/s of egress.
  std::optional<HardwareDescription> h100 = lookupHardware("h100-nvlink");
  EXPECT_EQ(h100->interconnect, InterconnectKind::Switch);
  EXPECT_DOUBLE_EQ(h100->egressBandwidth(), 450e9);
  EXPECT_DOUBLE_EQ(h100->peak(ElementKind::BF16), 989e12);
}

TEST(HardwareTest, HbmCapacities) {
  EXPECT_DOUBLE_EQ(lookupHardware("tpu-v5e")->hbmCapacity, 16e9);
  EXPECT_DOUBLE_EQ(lookupHardware("tpu-v5p")->hbmCapacity, 95.0 * (1 << 30));
  EXPECT_DOUBLE_EQ(lookupHardware("h100-nvlink")->hbmCapacity, 80e9);
}

TEST(HardwareTest, UnknownNameIsNotFound) {
  EXPECT_FALSE(lookupHardware("tpu-v3"));
  EXPECT_FALSE(lookupHardware(""));
  EXPECT_FALSE(lookupHardware("TPU-V4"));
}

TEST(HardwareTest, WrapAroundOnlyOnWholeCubes) {
  HardwareDescription v4 = *lookupHardware("tpu-v4");
  EXPECT_TRUE(v4.hasWrapAround({4, 4, 4}));
  EXPECT_TRUE(v4.hasWrapAround({4, 4, 8}));
  EXPECT_TRUE(v4.hasWrapAround({8, 16, 16}));
  EXPECT_FALSE(v4.hasWrapAround({2, 2, 1}));
  EXPECT_FALSE(v4.hasWrapAround({4, 4, 2}));
  EXPECT_TRUE(lookupHardware("h100-nvlink")->hasWrapAround({8}));
  v4.wrapAroundUnit = 0;
  EXPECT_TRUE(v4.hasWrapAround({2, 2, 1}));
}

TEST(HardwareTest, V5eWrapsEachWholeDimension) {
  HardwareDescription v5e = *lookupHardware("tpu-v5e");
  EXPECT_TRUE(v5e.wrapAroundPerDimension);
  EXPECT_FALSE(v5e.wrapsDimension({8, 16}, 0));
  EXPECT_TRUE(v5e.wrapsDimension({8, 16}, 1));
  EXPECT_FALSE(v5e.hasWrapAround({8, 16}));
  EXPECT_TRUE(v5e.hasWrapAround({16, 16}));
  // The whole-cube rule of v4 does not wrap a whole dimension alone.
  EXPECT_FALSE(lookupHardware("tpu-v4")->wrapsDimension({4, 4, 2}, 0));
}

TEST(HardwareTest, ElementAndInterconnectNamesRoundTrip) {
  for (ElementKind kind :
       {ElementKind::F32, ElementKind::BF16, ElementKind::F16, ElementKind::I8})
    EXPECT_EQ(symbolizeElementKind(stringifyElementKind(kind)), kind);
  EXPECT_FALSE(symbolizeElementKind("f64"));
  EXPECT_EQ(symbolizeInterconnectKind("switch"), InterconnectKind::Switch);
  EXPECT_FALSE(symbolizeInterconnectKind("mesh"));
}

/// Writes hardware files into a temporary file removed at the end.
class HardwareJSONTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("hardware", "json", path));
  }
  void TearDown() override { llvm::sys::fs::remove(path); }

  /// A valid torus description.
  static llvm::json::Object validObject() {
    return llvm::json::Object{
        {"name", "my-chip"},
        {"peakFlops",
         llvm::json::Object{
             {"f32", 1e12}, {"bf16", 4e12}, {"f16", 2e12}, {"i8", 8e12}}},
        {"hbmBandwidth", 5e11},
        {"linkBandwidth", 2.5e10},
        {"linksPerChip", 4},
        {"hopLatency", 1.5e-6},
        {"dmaSlots", 16},
        {"collectiveLaunchOverhead", 3e-6},
        {"interconnect", "torus"},
        {"torusRank", 2},
        {"wrapAroundUnit", 8},
    };
  }

  void writeText(llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << text;
  }

  llvm::Expected<HardwareDescription> load(llvm::json::Object object) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(object));
    writeText(text);
    return loadHardwareFromJSON(path);
  }

  /// Loads `object`, expects failure, and returns the message.
  std::string loadError(llvm::json::Object object) {
    llvm::Expected<HardwareDescription> hw = load(std::move(object));
    if (hw) {
      ADD_FAILURE() << "loading succeeded";
      return "";
    }
    std::string message = llvm::toString(hw.takeError());
    EXPECT_NE(message.find(path.str().str()), std::string::npos) << message;
    return message;
  }

  llvm::SmallString<128> path;
};

TEST_F(HardwareJSONTest, HbmCapacityIsReadAndChecked) {
  llvm::json::Object object = validObject();
  object["hbmCapacity"] = 24e9;
  llvm::Expected<HardwareDescription> hw = load(std::move(object));
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_DOUBLE_EQ(hw->hbmCapacity, 24e9);
  llvm::json::Object negative = validObject();
  negative["hbmCapacity"] = -1;
  EXPECT_NE(loadError(std::move(negative)).find("hbmCapacity"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, ValidFileLoads) {
  llvm::Expected<HardwareDescription> hw = load(validObject());
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->name, "my-chip");
  EXPECT_DOUBLE_EQ(hw->peak(ElementKind::F32), 1e12);
  EXPECT_DOUBLE_EQ(hw->peak(ElementKind::BF16), 4e12);
  EXPECT_DOUBLE_EQ(hw->peak(ElementKind::F16), 2e12);
  EXPECT_DOUBLE_EQ(hw->peak(ElementKind::I8), 8e12);
  EXPECT_DOUBLE_EQ(hw->hbmBandwidth, 5e11);
  EXPECT_DOUBLE_EQ(hw->linkBandwidth, 2.5e10);
  EXPECT_EQ(hw->linksPerChip, 4u);
  EXPECT_DOUBLE_EQ(hw->hopLatency, 1.5e-6);
  EXPECT_EQ(hw->dmaSlots, 16u);
  EXPECT_DOUBLE_EQ(hw->collectiveLaunchOverhead, 3e-6);
  EXPECT_EQ(hw->interconnect, InterconnectKind::Torus);
  EXPECT_EQ(hw->torusRank, 2u);
  EXPECT_EQ(hw->wrapAroundUnit, 8u);
  EXPECT_FALSE(hw->wrapAroundPerDimension);
  // Optional: unknown unless given.
  EXPECT_DOUBLE_EQ(hw->hbmCapacity, 0);
}

TEST_F(HardwareJSONTest, WrapAroundPerDimensionIsOptional) {
  llvm::json::Object object = validObject();
  object["wrapAroundPerDimension"] = true;
  llvm::Expected<HardwareDescription> hw = load(std::move(object));
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_TRUE(hw->wrapAroundPerDimension);

  llvm::json::Object notBool = validObject();
  notBool["wrapAroundPerDimension"] = 1;
  EXPECT_NE(loadError(std::move(notBool))
                .find("field 'wrapAroundPerDimension' must be true or false"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, SwitchNeedsNoTorusFields) {
  llvm::json::Object object = validObject();
  object["interconnect"] = "switch";
  object.erase("torusRank");
  object.erase("wrapAroundUnit");
  llvm::Expected<HardwareDescription> hw = load(std::move(object));
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->interconnect, InterconnectKind::Switch);

  llvm::json::Object withRank = validObject();
  withRank["interconnect"] = "switch";
  EXPECT_NE(loadError(std::move(withRank))
                .find("field 'torusRank' must be 0 for a switch"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, MissingField) {
  llvm::json::Object object = validObject();
  object.erase("hbmBandwidth");
  EXPECT_NE(loadError(std::move(object)).find("missing field 'hbmBandwidth'"),
            std::string::npos);

  llvm::json::Object noRank = validObject();
  noRank.erase("torusRank");
  EXPECT_NE(loadError(std::move(noRank)).find("missing field 'torusRank'"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, MissingElementKind) {
  llvm::json::Object object = validObject();
  object["peakFlops"].getAsObject()->erase("i8");
  EXPECT_NE(loadError(std::move(object)).find("missing field 'peakFlops.i8'"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, WrongTypes) {
  llvm::json::Object text = validObject();
  text["linkBandwidth"] = "fast";
  EXPECT_NE(
      loadError(std::move(text)).find("field 'linkBandwidth' must be a number"),
      std::string::npos);

  llvm::json::Object fraction = validObject();
  fraction["linksPerChip"] = 4.5;
  EXPECT_NE(loadError(std::move(fraction))
                .find("field 'linksPerChip' must be an integer"),
            std::string::npos);

  llvm::json::Object name = validObject();
  name["name"] = 3;
  EXPECT_NE(loadError(std::move(name)).find("field 'name' must be a string"),
            std::string::npos);

  llvm::json::Object peak = validObject();
  peak["peakFlops"] = 1e12;
  EXPECT_NE(loadError(std::move(peak))
                .find("field 'peakFlops' must be an "
                      "object"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, NegativeBandwidth) {
  llvm::json::Object object = validObject();
  object["hbmBandwidth"] = -1e9;
  EXPECT_NE(loadError(std::move(object))
                .find("field 'hbmBandwidth' must be between 1e-30 and "
                      "1e+30, got -1000000000"),
            std::string::npos);

  llvm::json::Object peak = validObject();
  (*peak["peakFlops"].getAsObject())["bf16"] = 0;
  EXPECT_NE(
      loadError(std::move(peak)).find("field 'peakFlops.bf16' must be between"),
      std::string::npos);

  llvm::json::Object slots = validObject();
  slots["dmaSlots"] = -2;
  EXPECT_NE(
      loadError(std::move(slots))
          .find("field 'dmaSlots' must be an integer between 1 and 65536, "
                "got -2"),
      std::string::npos);
}

TEST_F(HardwareJSONTest, ExtremeFiguresAreRefused) {
  // 1e-300 B/s made every transfer take inf seconds, and overlap-sim --json
  // printed inf (not JSON).
  llvm::json::Object tiny = validObject();
  tiny["linkBandwidth"] = 1e-300;
  EXPECT_NE(loadError(std::move(tiny))
                .find("field 'linkBandwidth' must be between 1e-30 and "
                      "1e+30, got 1e-300"),
            std::string::npos);

  llvm::json::Object huge = validObject();
  huge["hopLatency"] = 1e300;
  EXPECT_NE(loadError(std::move(huge))
                .find("field 'hopLatency' must be 0 or between 1e-30 and "
                      "1e+30, got 1e+300"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, DeepNestingIsRefusedBeforeParsing) {
  // 100,000 levels overflowed the stack of the recursive parser.
  writeText(std::string(100000, '[') + std::string(100000, ']'));
  llvm::Expected<HardwareDescription> hw = loadHardwareFromJSON(path);
  ASSERT_FALSE(static_cast<bool>(hw));
  EXPECT_NE(llvm::toString(hw.takeError())
                .find("nested 100000 levels deep; at most 32 are allowed"),
            std::string::npos);
  // Brackets inside strings do not count.
  llvm::json::Object named = validObject();
  named["name"] = std::string(100, '[');
  EXPECT_TRUE(static_cast<bool>(load(std::move(named))));
}

TEST_F(HardwareJSONTest, UnknownNames) {
  llvm::json::Object typo = validObject();
  typo["hbmBandwith"] = 1e12;
  EXPECT_NE(loadError(std::move(typo)).find("unknown field 'hbmBandwith'"),
            std::string::npos);

  llvm::json::Object kind = validObject();
  kind["interconnect"] = "mesh";
  EXPECT_NE(loadError(std::move(kind))
                .find("field 'interconnect' must be \"torus\" or \"switch\""),
            std::string::npos);

  llvm::json::Object element = validObject();
  (*element["peakFlops"].getAsObject())["f64"] = 1e12;
  EXPECT_NE(loadError(std::move(element)).find("unknown element kind 'f64'"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, TorusNeedsLinksForEveryDimension) {
  llvm::json::Object object = validObject();
  object["torusRank"] = 3;
  EXPECT_NE(loadError(std::move(object))
                .find("field 'linksPerChip' must be at least 2 * torusRank"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, CountsAreCheckedBeforeTheirTypeHoldsThem) {
  // torusRank 2^31 once passed: 2 * torusRank wrapped to 0 in the unsigned
  // comparison with linksPerChip, and the topology then sized a vector of
  // 2^31 extents.
  llvm::json::Object rank = validObject();
  rank["torusRank"] = int64_t(1) << 31;
  EXPECT_NE(loadError(std::move(rank))
                .find("field 'torusRank' must be an integer between 0 and 20, "
                      "got 2147483648"),
            std::string::npos);
  // 2^32 is past what an unsigned holds: refused, not truncated to 0.
  llvm::json::Object links = validObject();
  links["linksPerChip"] = int64_t(1) << 32;
  EXPECT_NE(loadError(std::move(links))
                .find("field 'linksPerChip' must be an integer between 1 and "
                      "65536, got 4294967296"),
            std::string::npos);
  llvm::json::Object unit = validObject();
  unit["wrapAroundUnit"] = 2.5;
  EXPECT_NE(loadError(std::move(unit))
                .find("field 'wrapAroundUnit' must be an integer between 0 and "
                      "1048576, got 2.5"),
            std::string::npos);
}

TEST_F(HardwareJSONTest, EveryCountAtItsBoundsLoads) {
  llvm::json::Object most = validObject();
  most["torusRank"] = ranges::kTorusRank.max;
  most["linksPerChip"] = ranges::kLinksPerChip.max;
  most["dmaSlots"] = ranges::kDmaSlots.max;
  most["wrapAroundUnit"] = ranges::kWrapAroundUnit.max;
  llvm::Expected<HardwareDescription> hw = load(std::move(most));
  ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
  EXPECT_EQ(hw->torusRank, 20u);
  EXPECT_EQ(hw->dmaSlots, kMaxTransfersInFlight);

  llvm::json::Object least = validObject();
  least["torusRank"] = 1;
  least["linksPerChip"] = 2;
  least["dmaSlots"] = 1;
  least["wrapAroundUnit"] = 0;
  llvm::Expected<HardwareDescription> small = load(std::move(least));
  ASSERT_TRUE(bool(small)) << llvm::toString(small.takeError());
  EXPECT_EQ(small->dmaSlots, 1u);
}

TEST_F(HardwareJSONTest, UnreadableOrMalformedFile) {
  writeText("{\"name\": ");
  llvm::Expected<HardwareDescription> malformed = loadHardwareFromJSON(path);
  ASSERT_FALSE(bool(malformed));
  EXPECT_NE(llvm::toString(malformed.takeError()).find(path.str().str()),
            std::string::npos);

  writeText("[1, 2]");
  llvm::Expected<HardwareDescription> array = loadHardwareFromJSON(path);
  ASSERT_FALSE(bool(array));
  EXPECT_NE(llvm::toString(array.takeError()).find("must be an object"),
            std::string::npos);

  llvm::sys::fs::remove(path);
  llvm::Expected<HardwareDescription> missing = loadHardwareFromJSON(path);
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find(path.str().str()),
            std::string::npos);
}

TEST(HardwareTest, ResolveBuiltinName) {
  for (llvm::StringRef name : builtinHardwareNames()) {
    SCOPED_TRACE(name.str());
    llvm::Expected<HardwareDescription> hw = resolveHardware(name);
    ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->name, name);
    EXPECT_DOUBLE_EQ(hw->linkBandwidth, lookupHardware(name)->linkBandwidth);
  }
}

TEST(HardwareTest, ResolveUnknownNameListsBuiltins) {
  llvm::Expected<HardwareDescription> hw = resolveHardware("tpu-v9");
  ASSERT_FALSE(bool(hw));
  std::string message = llvm::toString(hw.takeError());
  EXPECT_NE(message.find("unknown hardware 'tpu-v9'"), std::string::npos)
      << message;
  for (llvm::StringRef name : builtinHardwareNames())
    EXPECT_NE(message.find(name.str()), std::string::npos) << message;
  EXPECT_NE(message.find(".json"), std::string::npos) << message;
}

/// A hardware option naming a file: with or without the .json extension,
/// as long as it is a path.
TEST(HardwareTest, ResolveJSONFileInTemporaryDirectory) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("hardware", dir));
  llvm::SmallString<128> json(dir), bare(dir);
  llvm::sys::path::append(json, "chip.json");
  llvm::sys::path::append(bare, "chip");
  llvm::json::Object object{
      {"name", "file-chip"},
      {"peakFlops",
       llvm::json::Object{
           {"f32", 1e12}, {"bf16", 4e12}, {"f16", 2e12}, {"i8", 8e12}}},
      {"hbmBandwidth", 5e11},
      {"linkBandwidth", 2.5e10},
      {"linksPerChip", 2},
      {"hopLatency", 1.5e-6},
      {"dmaSlots", 16},
      {"collectiveLaunchOverhead", 3e-6},
      {"interconnect", "switch"},
  };
  for (llvm::StringRef path : {json.str(), bare.str()}) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << llvm::json::Value(llvm::json::Object(object));
  }

  for (llvm::StringRef path : {json.str(), bare.str()}) {
    SCOPED_TRACE(path.str());
    llvm::Expected<HardwareDescription> hw = resolveHardware(path);
    ASSERT_TRUE(bool(hw)) << llvm::toString(hw.takeError());
    EXPECT_EQ(hw->name, "file-chip");
    EXPECT_EQ(hw->interconnect, InterconnectKind::Switch);
    EXPECT_DOUBLE_EQ(hw->egressBandwidth(), 5e10);
  }

  // A path that does not exist is an error naming it, not a lookup miss.
  llvm::SmallString<128> missing(dir);
  llvm::sys::path::append(missing, "missing.json");
  llvm::Expected<HardwareDescription> hw = resolveHardware(missing);
  ASSERT_FALSE(bool(hw));
  EXPECT_NE(llvm::toString(hw.takeError()).find(missing.str().str()),
            std::string::npos);

  llvm::sys::fs::remove(json);
  llvm::sys::fs::remove(bare);
  llvm::sys::fs::remove(dir);
}

} // namespace
