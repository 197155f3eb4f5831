//===- ChromeTrace.h - What the simulator records for a trace ---*- C++ -*-===//
//
// Private to the simulator library: the spans the event simulation records
// when a trace is asked for, and the writer that turns them into Chrome /
// Perfetto trace JSON (one process per device with a compute and a wait
// track, one process for the links with a track per used link).
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_LIB_SIMULATOR_CHROMETRACE_H
#define OVERLAPDIALECT_LIB_SIMULATOR_CHROMETRACE_H

#include "OverlapDialect/CostModel/Program.h"
#include "OverlapDialect/CostModel/Topology.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace mlir {
namespace ovl {
namespace detail {

/// Spans of the simulation, times in seconds.
struct TraceRecord {
  /// A step on one device's compute stream, or a wait for communication.
  struct DeviceSpan {
    int64_t device;
    uint32_t label;
    double start;
    double duration;
  };
  /// The fluid phase of one transfer, shown on every link of its route
  /// (links[linksBegin, linksEnd)).
  struct TransferSpan {
    int64_t src;
    int64_t dst;
    double bytes;
    double start;
    double duration;
    uint32_t linksBegin;
    uint32_t linksEnd;
  };

  std::vector<DeviceSpan> compute;
  std::vector<DeviceSpan> waits;
  std::vector<TransferSpan> transfers;
  std::vector<int64_t> links;
};

/// Writes `record` as a Chrome trace: pid d (named "device d") for logical
/// device d with tid 0 "compute" and tid 1 "wait", pid numDevices ("links")
/// with one tid per used link named by Topology::describeLink. Times in
/// microseconds.
void writeChromeTrace(const TraceRecord &record, const SimProgram &program,
                      const Topology &topology, int64_t numDevices,
                      llvm::raw_ostream &os);

} // namespace detail
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_LIB_SIMULATOR_CHROMETRACE_H
