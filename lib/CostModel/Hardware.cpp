//===- Hardware.cpp - Built-in hardware and hardware files ----------------===//
//
// The built-in descriptions with the public source of each figure next to it,
// the wrap-around rule, and the JSON reader. Figures no vendor publishes
// (per-hop latency, DMA slots, launch overhead) are marked as assumptions.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Hardware.h"
#include "OverlapDialect/Support/BoundedFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace mlir::ovl;

llvm::StringRef mlir::ovl::stringifyElementKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::F16:
    return "f16";
  case ElementKind::I8:
    return "i8";
  }
  llvm_unreachable("unknown element kind");
}

std::optional<ElementKind>
mlir::ovl::symbolizeElementKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElementKind>>(name)
      .Case("f32", ElementKind::F32)
      .Case("bf16", ElementKind::BF16)
      .Case("f16", ElementKind::F16)
      .Case("i8", ElementKind::I8)
      .Default(std::nullopt);
}

llvm::StringRef mlir::ovl::stringifyInterconnectKind(InterconnectKind kind) {
  switch (kind) {
  case InterconnectKind::Torus:
    return "torus";
  case InterconnectKind::Switch:
    return "switch";
  }
  llvm_unreachable("unknown interconnect kind");
}

std::optional<InterconnectKind>
mlir::ovl::symbolizeInterconnectKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<InterconnectKind>>(name)
      .Case("torus", InterconnectKind::Torus)
      .Case("switch", InterconnectKind::Switch)
      .Default(std::nullopt);
}

bool HardwareDescription::wrapsDimension(llvm::ArrayRef<int64_t> extents,
                                         unsigned dim) const {
  if (interconnect == InterconnectKind::Switch || wrapAroundUnit == 0)
    return true;
  auto wholeUnits = [&](int64_t extent) {
    return extent % static_cast<int64_t>(wrapAroundUnit) == 0;
  };
  if (wrapAroundPerDimension)
    return wholeUnits(extents[dim]);
  return llvm::all_of(extents, wholeUnits);
}

bool HardwareDescription::hasWrapAround(llvm::ArrayRef<int64_t> extents) const {
  for (unsigned dim = 0; dim < extents.size(); ++dim)
    if (!wrapsDimension(extents, dim))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Built-in descriptions
//===----------------------------------------------------------------------===//

// Constants shared by the built-ins. TPUs have no f16 path in the MXU and XLA
// computes f16 through f32, so f16 runs at the f32 rate. The f32 rate is that
// of Precision::HIGHEST, which XLA:TPU emulates with six bf16 MXU passes, so
// it is a sixth of bf16 (the DEFAULT precision would be the bf16 rate itself,
// with bf16 rounding of the inputs).
static constexpr double kTpuF32Passes = 6;
static constexpr double kGiga = 1e9, kTera = 1e12;
// Gb/s to bytes/s.
static constexpr double kGbps = 1e9 / 8;

static HardwareDescription makeTpuV4() {
  HardwareDescription hw;
  hw.name = "tpu-v4";
  // 275 TFLOP/s bf16 and 275 TOPS int8 per chip: Cloud TPU documentation,
  // "TPU v4" system architecture page; Jouppi et al., "TPU v4: An Optically
  // Reconfigurable Supercomputer for Machine Learning", ISCA 2023.
  double bf16 = 275 * kTera;
  hw.peakFlops = {bf16 / kTpuF32Passes, bf16, bf16 / kTpuF32Passes, bf16};
  // 32 GiB HBM2 at 1200 GB/s: Cloud TPU documentation, "TPU v4".
  hw.hbmCapacity = 32.0 * (1 << 30);
  hw.hbmBandwidth = 1200 * kGiga;
  // Six ICI links per chip forming a 3-D torus (ISCA 2023 paper), about
  // 45 GB/s per link and direction (the figure the project's gpt-ladder.md
  // takes for the paper's evaluation).
  hw.linkBandwidth = 45 * kGiga;
  hw.linksPerChip = 6;
  // Assumption: about 1 us per hop (the project's gpt-ladder.md figure; no
  // vendor publishes it).
  hw.hopLatency = 1e-6;
  // Assumptions, no public figure: eight DMAs in flight, 1 us to launch a
  // collective.
  hw.dmaSlots = 8;
  hw.collectiveLaunchOverhead = 1e-6;
  hw.interconnect = InterconnectKind::Torus;
  hw.torusRank = 3;
  // Optical circuit switches close the torus only on whole 4x4x4 cubes
  // (ISCA 2023 paper; Cloud TPU docs on v4 slice shapes and wraparound).
  hw.wrapAroundUnit = 4;
  return hw;
}

static HardwareDescription makeTpuV5e() {
  HardwareDescription hw;
  hw.name = "tpu-v5e";
  // 197 TFLOP/s bf16 and 393 TOPS int8 per chip: Cloud TPU documentation,
  // "TPU v5e".
  double bf16 = 197 * kTera;
  hw.peakFlops = {bf16 / kTpuF32Passes, bf16, bf16 / kTpuF32Passes,
                  393 * kTera};
  // 16 GB HBM2 at 819 GB/s: Cloud TPU documentation, "TPU v5e".
  hw.hbmCapacity = 16 * kGiga;
  hw.hbmBandwidth = 819 * kGiga;
  // 1600 Gb/s of ICI per chip over the 4 links of a 2-D torus (Cloud TPU
  // documentation, "TPU v5e"). Assumption: the per-chip figure sums one
  // direction of every link, so each link carries 1600 / 4 = 400 Gb/s
  // = 50 GB/s per direction (it would be half that if the figure counted
  // both directions). This matches v4's ~45-50 GB/s per link.
  hw.linkBandwidth = 1600 * kGbps / 4;
  hw.linksPerChip = 4;
  // Assumptions as for v4.
  hw.hopLatency = 1e-6;
  hw.dmaSlots = 8;
  hw.collectiveLaunchOverhead = 1e-6;
  hw.interconnect = InterconnectKind::Torus;
  hw.torusRank = 2;
  // A v5e pod is 16x16; a slice wraps along each axis that spans the whole
  // pod, independently of the other ("A TPU v5e 8x16 will have a wraparound
  // on the longer axis", How to Scale Your Model, jax-ml.github.io/
  // scaling-book/tpus).
  hw.wrapAroundUnit = 16;
  hw.wrapAroundPerDimension = true;
  return hw;
}

static HardwareDescription makeTpuV5p() {
  HardwareDescription hw;
  hw.name = "tpu-v5p";
  // 459 TFLOP/s bf16 per chip: Cloud TPU documentation, "TPU v5p"; 918
  // TOPS int8: the JAX scaling book's table (jax-ml.github.io/scaling-book/
  // tpus), twice bf16 as on v5e.
  double bf16 = 459 * kTera;
  hw.peakFlops = {bf16 / kTpuF32Passes, bf16, bf16 / kTpuF32Passes,
                  918 * kTera};
  // 95 GiB HBM2e at 2765 GB/s: Cloud TPU documentation, "TPU v5p".
  hw.hbmCapacity = 95.0 * (1 << 30);
  hw.hbmBandwidth = 2765 * kGiga;
  // 4800 Gb/s of ICI per chip over the 6 links of a 3-D torus (Cloud TPU
  // documentation, "TPU v5p"), read as for v5e: 800 Gb/s = 100 GB/s per link
  // and direction.
  hw.linkBandwidth = 4800 * kGbps / 6;
  hw.linksPerChip = 6;
  // Assumptions as for v4.
  hw.hopLatency = 1e-6;
  hw.dmaSlots = 8;
  hw.collectiveLaunchOverhead = 1e-6;
  hw.interconnect = InterconnectKind::Torus;
  hw.torusRank = 3;
  // Like v4, v5p slices wrap around only when built of whole 4x4x4 cubes
  // (Cloud TPU documentation, "TPU v5p", slice topologies).
  hw.wrapAroundUnit = 4;
  return hw;
}

static HardwareDescription makeH100NvLink() {
  HardwareDescription hw;
  hw.name = "h100-nvlink";
  // NVIDIA H100 Tensor Core GPU datasheet, SXM5, dense (no sparsity):
  // 989 TFLOP/s bf16 and f16, 1979 TOPS int8, 67 TFLOP/s f32 without tensor
  // cores. f32 matmuls use TF32 tensor cores (495 TFLOP/s) only when a
  // framework opts in, so the plain f32 rate is the honest default.
  hw.peakFlops = {67 * kTera, 989 * kTera, 989 * kTera, 1979 * kTera};
  // 80 GB of HBM3 at 3.35 TB/s: same datasheet.
  hw.hbmCapacity = 80 * kGiga;
  hw.hbmBandwidth = 3350 * kGiga;
  // 900 GB/s of NVLink per GPU, counting both directions, over 18 NVLink4
  // links (datasheet; NVLink4 is 50 GB/s per link both ways): 25 GB/s per
  // link and direction, 450 GB/s of egress into the NVSwitches.
  hw.linkBandwidth = 25 * kGiga;
  hw.linksPerChip = 18;
  // Assumption: about 2-3 us from sending to receiving through NVSwitch for
  // one ring step (measured NCCL small-message latencies are of this order).
  hw.hopLatency = 2.5e-6;
  // Assumptions, no public figure: eight transfers in flight, 5 us to launch
  // a collective kernel.
  hw.dmaSlots = 8;
  hw.collectiveLaunchOverhead = 5e-6;
  hw.interconnect = InterconnectKind::Switch;
  return hw;
}

std::vector<llvm::StringRef> mlir::ovl::builtinHardwareNames() {
  return {"tpu-v4", "tpu-v5e", "tpu-v5p", "h100-nvlink"};
}

std::optional<HardwareDescription>
mlir::ovl::lookupHardware(llvm::StringRef name) {
  if (name == "tpu-v4")
    return makeTpuV4();
  if (name == "tpu-v5e")
    return makeTpuV5e();
  if (name == "tpu-v5p")
    return makeTpuV5p();
  if (name == "h100-nvlink")
    return makeH100NvLink();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Verification and JSON
//===----------------------------------------------------------------------===//

static llvm::Error fieldError(llvm::StringRef field, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "field '" + field + "' " + what);
}

/// The field's error when `value` is outside `range`.
static llvm::Error checkField(llvm::StringRef field,
                              const overlap::NumericRange &range,
                              double value) {
  std::string error =
      overlap::checkNumber(("field '" + field + "'").str(), range, value);
  if (error.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
}

/// JSON nested deeper than this is refused before it is parsed: the parser
/// recurses once per level (100,000 levels overflowed the stack).
static constexpr unsigned kMaxJSONDepth = 32;

/// The most bytes a hardware description is read with: a few hundred make
/// one, and a file that never ends (a pipe, /dev/zero) is not read at all.
static constexpr uint64_t kMaxHardwareFileBytes = 1 << 20;

/// The deepest nesting of `text`'s arrays and objects, outside strings.
static unsigned getNestingDepth(llvm::StringRef text) {
  unsigned depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

llvm::Error mlir::ovl::verifyHardware(const HardwareDescription &hw) {
  if (hw.name.empty())
    return fieldError("name", "must not be empty");
  for (unsigned i = 0; i < kNumElementKinds; ++i) {
    std::string field =
        ("peakFlops." + stringifyElementKind(static_cast<ElementKind>(i)))
            .str();
    if (llvm::Error err = checkField(field, ranges::kFigure, hw.peakFlops[i]))
      return err;
  }
  const std::tuple<const char *, const overlap::NumericRange &, double>
      fields[] = {
          {"hbmCapacity", ranges::kOptionalFigure, hw.hbmCapacity},
          {"hopLatency", ranges::kOptionalFigure, hw.hopLatency},
          {"collectiveLaunchOverhead", ranges::kOptionalFigure,
           hw.collectiveLaunchOverhead},
          {"hbmBandwidth", ranges::kFigure, hw.hbmBandwidth},
          {"linkBandwidth", ranges::kFigure, hw.linkBandwidth},
          {"linksPerChip", ranges::kLinksPerChip, hw.linksPerChip},
          {"dmaSlots", ranges::kDmaSlots, hw.dmaSlots},
          {"torusRank", ranges::kTorusRank, hw.torusRank},
          {"wrapAroundUnit", ranges::kWrapAroundUnit, hw.wrapAroundUnit}};
  for (auto [field, range, value] : fields)
    if (llvm::Error err = checkField(field, range, value))
      return err;
  if (hw.interconnect == InterconnectKind::Torus) {
    if (hw.torusRank == 0)
      return fieldError("torusRank", "must be positive for a torus");
    if (hw.linksPerChip < 2 * hw.torusRank)
      return fieldError("linksPerChip",
                        llvm::formatv("must be at least 2 * torusRank = {0}, "
                                      "one link per direction of each "
                                      "dimension",
                                      2 * hw.torusRank));
  } else {
    if (hw.torusRank != 0)
      return fieldError("torusRank", "must be 0 for a switch");
    if (hw.wrapAroundUnit != 0)
      return fieldError("wrapAroundUnit", "must be 0 for a switch");
  }
  return llvm::Error::success();
}

namespace {
/// Reads typed fields out of one JSON object, naming the field in errors.
class FieldReader {
public:
  explicit FieldReader(const llvm::json::Object &object) : object(object) {}

  llvm::Error readNumber(llvm::StringRef key, double &out,
                         llvm::StringRef prefix = "") {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return missing(prefix, key);
    std::optional<double> number = value->getAsNumber();
    if (!number)
      return fieldError((prefix + key).str(), "must be a number");
    out = *number;
    return llvm::Error::success();
  }

  /// A count held in an unsigned: checked against `range` before it is
  /// narrowed.
  llvm::Error readCount(llvm::StringRef key, const overlap::NumericRange &range,
                        unsigned &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return missing("", key);
    std::optional<double> number = value->getAsNumber();
    if (!number)
      return fieldError(key, "must be a number");
    if (llvm::Error err = checkField(key, range, *number))
      return err;
    out = static_cast<unsigned>(*number);
    return llvm::Error::success();
  }

  llvm::Error readString(llvm::StringRef key, std::string &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return missing("", key);
    std::optional<llvm::StringRef> string = value->getAsString();
    if (!string)
      return fieldError(key, "must be a string");
    out = string->str();
    return llvm::Error::success();
  }

  bool has(llvm::StringRef key) const { return object.get(key) != nullptr; }

private:
  static llvm::Error missing(llvm::StringRef prefix, llvm::StringRef key) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "missing field '" + prefix + key + "'");
  }

  const llvm::json::Object &object;
};
} // namespace

static const char *const kFieldNames[] = {"name",
                                          "peakFlops",
                                          "hbmCapacity",
                                          "hbmBandwidth",
                                          "linkBandwidth",
                                          "linksPerChip",
                                          "hopLatency",
                                          "dmaSlots",
                                          "collectiveLaunchOverhead",
                                          "interconnect",
                                          "torusRank",
                                          "wrapAroundUnit",
                                          "wrapAroundPerDimension"};

static llvm::Expected<HardwareDescription>
parseHardware(const llvm::json::Value &root) {
  const llvm::json::Object *object = root.getAsObject();
  if (!object)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "top level must be an object");
  // A misspelt optional field would otherwise be silently ignored.
  for (const auto &entry : *object)
    if (!llvm::is_contained(kFieldNames, entry.first.str()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unknown field '" + entry.first.str() +
                                         "'");

  HardwareDescription hw;
  FieldReader reader(*object);
  if (llvm::Error err = reader.readString("name", hw.name))
    return std::move(err);

  const llvm::json::Value *peak = object->get("peakFlops");
  if (!peak)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "missing field 'peakFlops'");
  const llvm::json::Object *peakObject = peak->getAsObject();
  if (!peakObject)
    return fieldError("peakFlops", "must be an object keyed by element kind");
  for (const auto &entry : *peakObject)
    if (!symbolizeElementKind(entry.first.str()))
      return fieldError("peakFlops",
                        "has unknown element kind '" + entry.first.str() + "'");
  FieldReader peakReader(*peakObject);
  for (unsigned i = 0; i < kNumElementKinds; ++i)
    if (llvm::Error err = peakReader.readNumber(
            stringifyElementKind(static_cast<ElementKind>(i)), hw.peakFlops[i],
            "peakFlops."))
      return std::move(err);

  // Optional: 0 (unknown) checks no fit.
  if (reader.has("hbmCapacity"))
    if (llvm::Error err = reader.readNumber("hbmCapacity", hw.hbmCapacity))
      return std::move(err);
  if (llvm::Error err = reader.readNumber("hbmBandwidth", hw.hbmBandwidth))
    return std::move(err);
  if (llvm::Error err = reader.readNumber("linkBandwidth", hw.linkBandwidth))
    return std::move(err);
  if (llvm::Error err = reader.readCount("linksPerChip", ranges::kLinksPerChip,
                                         hw.linksPerChip))
    return std::move(err);
  if (llvm::Error err = reader.readNumber("hopLatency", hw.hopLatency))
    return std::move(err);
  if (llvm::Error err =
          reader.readCount("dmaSlots", ranges::kDmaSlots, hw.dmaSlots))
    return std::move(err);
  if (llvm::Error err = reader.readNumber("collectiveLaunchOverhead",
                                          hw.collectiveLaunchOverhead))
    return std::move(err);

  std::string interconnect;
  if (llvm::Error err = reader.readString("interconnect", interconnect))
    return std::move(err);
  std::optional<InterconnectKind> kind =
      symbolizeInterconnectKind(interconnect);
  if (!kind)
    return fieldError("interconnect",
                      "must be \"torus\" or \"switch\", got \"" + interconnect +
                          "\"");
  hw.interconnect = *kind;
  // A switch has no torus shape; verifyHardware rejects one that claims it.
  if (hw.interconnect == InterconnectKind::Torus || reader.has("torusRank"))
    if (llvm::Error err =
            reader.readCount("torusRank", ranges::kTorusRank, hw.torusRank))
      return std::move(err);
  if (hw.interconnect == InterconnectKind::Torus ||
      reader.has("wrapAroundUnit"))
    if (llvm::Error err = reader.readCount(
            "wrapAroundUnit", ranges::kWrapAroundUnit, hw.wrapAroundUnit))
      return std::move(err);
  // Optional: whole-slice wrap-around (v4, v5p) unless it says otherwise.
  if (const llvm::json::Value *perDimension =
          root.getAsObject()->get("wrapAroundPerDimension")) {
    std::optional<bool> flag = perDimension->getAsBoolean();
    if (!flag)
      return fieldError("wrapAroundPerDimension", "must be true or false");
    hw.wrapAroundPerDimension = *flag;
  }

  if (llvm::Error err = verifyHardware(hw))
    return std::move(err);
  return hw;
}

llvm::Expected<HardwareDescription>
mlir::ovl::loadHardwareFromJSON(llvm::StringRef path) {
  auto prefixed = [&](llvm::Error err) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "hardware file '" + path +
                                       "': " + llvm::toString(std::move(err)));
  };
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      overlap::readBoundedFile(path, kMaxHardwareFileBytes, /*isText=*/true);
  if (!buffer)
    return prefixed(buffer.takeError());
  unsigned depth = getNestingDepth((*buffer)->getBuffer());
  if (depth > kMaxJSONDepth)
    return prefixed(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("nested {0} levels deep; at most {1} are allowed", depth,
                      kMaxJSONDepth)));
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse((*buffer)->getBuffer());
  if (!root)
    return prefixed(root.takeError());
  llvm::Expected<HardwareDescription> hw = parseHardware(*root);
  if (!hw)
    return prefixed(hw.takeError());
  return hw;
}

llvm::Expected<HardwareDescription>
mlir::ovl::resolveHardware(llvm::StringRef nameOrPath) {
  if (std::optional<HardwareDescription> hw = lookupHardware(nameOrPath))
    return *hw;
  if (nameOrPath.ends_with(".json") || nameOrPath.contains('/'))
    return loadHardwareFromJSON(nameOrPath);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "unknown hardware '" + nameOrPath +
          "' (built in: " + llvm::join(builtinHardwareNames(), ", ") +
          "; or the path of a .json description)");
}
