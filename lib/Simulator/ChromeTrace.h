//===- ChromeTrace.h - What the simulator records for a trace ---*- C++ -*-===//
//
// Private to the simulator library: the spans the event simulation records
// when a trace is asked for, and the writer that turns them into Chrome /
// Perfetto trace JSON (one process per traced device with a compute, a
// wait and in-flight tracks, one process for the links of the traced
// devices with a track per used link).
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_LIB_SIMULATOR_CHROMETRACE_H
#define OVERLAPDIALECT_LIB_SIMULATOR_CHROMETRACE_H

#include "OverlapDialect/CostModel/Program.h"
#include "OverlapDialect/CostModel/Topology.h"
#include "OverlapDialect/Simulator/DeviceSymmetry.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace ovl {
namespace detail {

/// Spans of the simulation, times in seconds, of played devices and link
/// classes (DeviceSymmetry): the writer shows each traced device and link
/// with those of its orbit.
struct TraceRecord {
  /// A step on one device's compute stream, or a wait for communication.
  struct DeviceSpan {
    int64_t device;
    uint32_t label;
    double start;
    double duration;
  };
  /// Communication of one device in flight: a collective from its launch
  /// to the device's part done, or a permute the device sends from its
  /// issue to its arrival.
  struct CommSpan {
    int64_t device;
    uint32_t label;
    bool permute;
    double start;
    double duration;
  };
  /// The fluid phase of one transfer, shown on every traced link of its
  /// route (links[linksBegin, linksEnd), link classes).
  struct TransferSpan {
    /// Logical devices: the played sender and the receiver.
    int64_t src;
    int64_t dst;
    uint32_t label;
    double bytes;
    double start;
    double duration;
    uint32_t linksBegin;
    uint32_t linksEnd;
  };

  std::vector<DeviceSpan> compute;
  std::vector<DeviceSpan> waits;
  std::vector<CommSpan> comm;
  std::vector<TransferSpan> transfers;
  std::vector<int64_t> links;
  /// Per entry of `links`, the physical link of the played route in that
  /// class: a link of the class carries the transfer translated by what
  /// takes this link to it.
  std::vector<int64_t> playedLinks;
  /// Per played device and per link class: whether its spans are kept
  /// (it stands for a traced device or link).
  std::vector<bool> playedTraced;
  std::vector<bool> linkClassTraced;
};

/// The physical links that leave or enter the physical devices of the
/// logical devices `devices`, ascending.
std::vector<int64_t> linksOfDevices(const Topology &topology,
                                    const DeviceAssignment &assignment,
                                    llvm::ArrayRef<int64_t> devices);

/// Writes `record` as a Chrome trace of the logical devices `devices`
/// (ascending) and their links (linksOfDevices): pid d ("device d") with
/// tid 0 "compute", tid 1 "wait" and tids 2, 3, ... "in flight 1", "in
/// flight 2", ... (as many as the device had at once); pid numDevices
/// ("links") with one tid per link that carried data, named by
/// Topology::describeLink. With `maxSpans` > 0 at most that many spans:
/// those starting before the instant at which more would start. The
/// top-level "otherData" says what the trace shows of what. Returns what it
/// leaves out, or "" when it shows every device and span. Times in
/// microseconds.
std::string writeChromeTrace(const TraceRecord &record,
                             const SimProgram &program,
                             const Topology &topology,
                             const DeviceAssignment &assignment,
                             const DeviceSymmetry &symmetry,
                             llvm::ArrayRef<int64_t> devices, int64_t maxSpans,
                             llvm::raw_ostream &os);

} // namespace detail
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_LIB_SIMULATOR_CHROMETRACE_H
