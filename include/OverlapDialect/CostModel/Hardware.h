//===- Hardware.h - Accelerators and their interconnect ---------*- C++ -*-===//
//
// What the cost model, the link-level lowering and the simulator need to know
// about a chip and its interconnect: peak arithmetic rates per element type,
// HBM bandwidth, the interconnect's links, latency and shape. Built-in
// entries describe TPU v4, v5e, v5p and an H100 NVLink node; others load from
// a JSON file whose fields mirror `HardwareDescription`. No MLIR IR here: the
// simulator and the benchmarks use it without a context.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_HARDWARE_H
#define OVERLAPDIALECT_COSTMODEL_HARDWARE_H

#include "OverlapDialect/Support/NumericRange.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace ovl {

/// Element types the hardware prices differently. Our own enum rather than
/// mlir::Type, so that hardware files and the simulator stay IR-free.
enum class ElementKind { F32, BF16, F16, I8 };
constexpr unsigned kNumElementKinds = 4;

/// "f32", "bf16", "f16", "i8".
llvm::StringRef stringifyElementKind(ElementKind kind);
std::optional<ElementKind> symbolizeElementKind(llvm::StringRef name);

enum class InterconnectKind {
  /// A torus of `torusRank` dimensions; every chip has one link per direction
  /// of each dimension, each with its own bandwidth both ways, so a
  /// bidirectional ring doubles the bandwidth of a unidirectional one.
  Torus,
  /// A switch (NVSwitch): every device reaches every other in one hop, and a
  /// device's egress bandwidth (all its links together) is shared by all
  /// destinations, so sending both ways round a ring gains nothing.
  Switch,
};

/// "torus", "switch".
llvm::StringRef stringifyInterconnectKind(InterconnectKind kind);
std::optional<InterconnectKind> symbolizeInterconnectKind(llvm::StringRef name);

/// The most asynchronous transfers a device may have in flight at once, as
/// `dmaSlots` or a `max-in-flight` option: far more than any chip's DMA
/// engines, and small enough for the scheduler's and the simulator's
/// signed counts (2^31 slots once deadlocked the simulator at t = 0).
constexpr unsigned kMaxTransfersInFlight = 1u << 16;

/// The range of each number of a hardware description and of the options
/// that stand in for one; the JSON reader, verifyHardware, the passes,
/// overlap-sim and the C API check with these (overlap::checkNumber).
namespace ranges {
/// Rates, bandwidths and times: within it every time the cost model derives
/// from them stays finite.
inline constexpr overlap::NumericRange kFigure{false, 1e-30, 1e30};
/// hbmCapacity, hopLatency, collectiveLaunchOverhead and memory-budget,
/// where 0 means unknown, none or the default.
inline constexpr overlap::NumericRange kOptionalFigure{false, 1e-30, 1e30,
                                                       true};
inline constexpr overlap::NumericRange kDmaSlots{true, 1,
                                                 kMaxTransfersInFlight};
/// max-in-flight, where 0 takes the hardware's dmaSlots.
inline constexpr overlap::NumericRange kMaxInFlight{
    true, 1, kMaxTransfersInFlight, true};
inline constexpr overlap::NumericRange kLinksPerChip{true, 1, 1 << 16};
/// A machine has at most 2^20 chips, so at most 20 torus dimensions longer
/// than 1; 0 is a switch's.
inline constexpr overlap::NumericRange kTorusRank{true, 0, 20};
/// 0 means every dimension always wraps; no extent exceeds 2^20.
inline constexpr overlap::NumericRange kWrapAroundUnit{true, 0, 1 << 20};
} // namespace ranges

/// One chip and its interconnect. Rates in units per second, times in
/// seconds, bandwidths in bytes per second.
struct HardwareDescription {
  std::string name;
  /// Peak arithmetic rate per element kind, indexed by ElementKind, counting a
  /// multiply-add as two operations.
  std::array<double, kNumElementKinds> peakFlops = {};
  /// Bytes of HBM per chip; 0 when unknown (no fit is checked then).
  double hbmCapacity = 0;
  double hbmBandwidth = 0;
  /// Bandwidth of one link in one direction.
  double linkBandwidth = 0;
  unsigned linksPerChip = 0;
  /// Latency of one hop of a transfer (router, wire and DMA set-up).
  double hopLatency = 0;
  /// Asynchronous transfers one chip can have in flight at once (at most
  /// kMaxTransfersInFlight).
  unsigned dmaSlots = 0;
  /// Fixed cost of launching one collective, paid once per collective op.
  double collectiveLaunchOverhead = 0;
  InterconnectKind interconnect = InterconnectKind::Torus;
  /// Number of torus dimensions (2 or 3); 0 for a switch.
  unsigned torusRank = 0;
  /// Wrap-around rule of the torus: with `wrapAroundPerDimension` false a
  /// slice has wrap-around links in every dimension iff each of its extents
  /// is a multiple of this unit, and none otherwise (TPU v4 and v5p close
  /// the torus through optical switches only on whole 4x4x4 cubes); with it
  /// true each dimension wraps on its own when its extent is a multiple of
  /// the unit (TPU v5e: an 8x16 slice wraps along its 16-long axis). 0 means
  /// every dimension always wraps.
  unsigned wrapAroundUnit = 0;
  bool wrapAroundPerDimension = false;

  double peak(ElementKind kind) const {
    return peakFlops[static_cast<unsigned>(kind)];
  }

  /// Bandwidth a device can send at in total: all links, one direction.
  double egressBandwidth() const { return linkBandwidth * linksPerChip; }

  /// Whether a slice of the given extents (one per torus dimension) has
  /// wrap-around links; always true for a switch, where rings close in one
  /// hop anyway.
  bool hasWrapAround(llvm::ArrayRef<int64_t> extents) const;
  /// Whether dimension `dim` of a slice of the given extents has
  /// wrap-around links.
  bool wrapsDimension(llvm::ArrayRef<int64_t> extents, unsigned dim) const;
};

/// The built-in description called `name` ("tpu-v4", "tpu-v5e", "tpu-v5p",
/// "h100-nvlink"), or std::nullopt.
std::optional<HardwareDescription> lookupHardware(llvm::StringRef name);

/// Names of the built-in descriptions, in a stable order.
std::vector<llvm::StringRef> builtinHardwareNames();

/// Checks that every rate, bandwidth and count is positive and the torus
/// fields fit the interconnect kind; names the offending field.
llvm::Error verifyHardware(const HardwareDescription &hw);

/// Reads a description from a JSON object whose keys are the field names of
/// HardwareDescription, with `peakFlops` an object keyed by element kind
/// ("f32", "bf16", "f16", "i8") and `interconnect` "torus" or "switch";
/// `torusRank` and `wrapAroundUnit` are required for a torus only. Errors say
/// which file and which field.
llvm::Expected<HardwareDescription> loadHardwareFromJSON(llvm::StringRef path);

/// What the tools' and passes' `hardware` options accept: a built-in name,
/// or else the path of a JSON description. The error lists the built-in
/// names when `nameOrPath` is neither.
llvm::Expected<HardwareDescription> resolveHardware(llvm::StringRef nameOrPath);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_HARDWARE_H
