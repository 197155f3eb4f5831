//===- Simulator.h - Event simulation of an SPMD program --------*- C++ -*-===//
//
// Plays a SimProgram on every device of a DeviceAssignment: one compute
// stream per device, one queue per directed link shared by the transfers on
// it, per-hop latency, a limit on asynchronous transfers (permutes and
// collectives) in flight, blocking and asynchronous collectives run as the
// rounds of their CollectivePlan over the topology's links. Reports what a
// compiler engineer asks of a schedule: step time, compute, total and
// exposed communication, overlap, FLOP/s and utilization, and where the time
// goes per op; optionally a Chrome/Perfetto trace.
//
// Devices that play alike are played once: when translations of a torus map
// the placement and every communication pattern of the program onto
// themselves (DeviceSymmetry), one device per orbit stands for the others,
// and the report is the one every device would have given, bit for bit. On
// 2048 TPU v4 chips (a 16x16x8 torus) the GPT ladder's programs play 16
// devices. SimOptions::bruteForce plays every device.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SIMULATOR_SIMULATOR_H
#define OVERLAPDIALECT_SIMULATOR_SIMULATOR_H

#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/CostModel/Program.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace ovl {

struct SimOptions {
  /// Asynchronous permutes and collectives a device may have in flight; 0
  /// takes hardware.dmaSlots.
  unsigned maxInFlight = 0;
  /// Write a Chrome trace to this stream when set. A trace of every device
  /// plays every device (its links name each transfer's devices); one of
  /// some devices keeps the symmetry, each traced device showing its
  /// orbit's played one, which is how it plays.
  llvm::raw_ostream *trace = nullptr;
  /// The logical devices the trace shows, ascending, each once: their
  /// compute, wait and in-flight tracks and the links that leave or enter
  /// them. Empty: every device.
  std::vector<int64_t> traceDevices;
  /// At most this many spans in the trace (0: no bound): the earliest, cut
  /// at one instant so that the trace shows everything before it; the
  /// trace's otherData says what was left out.
  int64_t traceMaxSpans = 0;
  /// Play every device even when a DeviceSymmetry would let one per orbit
  /// stand for the others: the reference the symmetric simulation is
  /// checked against.
  bool bruteForce = false;
};

/// Where one op of the source program spent the critical device's time.
struct SimOpStats {
  std::string label;
  int64_t count = 0;
  /// Time on the compute stream.
  double computeSeconds = 0;
  /// Time the device waited in it for communication.
  double exposedSeconds = 0;
};

/// Times in seconds. Device figures are those of the critical device, the
/// one that finishes last (the lowest-numbered one on a tie).
struct SimReport {
  std::string hardware;
  std::string topology;
  int64_t numDevices = 0;
  /// Devices actually played: one per orbit of the symmetry found, or all.
  int64_t simulatedDevices = 0;
  /// The symmetry played (DeviceSymmetry::describe): its orbits, or why
  /// every device was played.
  std::string symmetry;
  int64_t criticalDevice = 0;
  double stepTime = 0;
  /// When the first device finishes (stepTime is the last one's).
  double earliestFinish = 0;
  double computeTime = 0;
  /// Time during which the device had communication in flight (a blocking
  /// collective or permute, or any started permute or collective not yet
  /// done).
  double commTime = 0;
  /// Time the device waited for communication: stepTime - computeTime.
  double exposedCommTime = 0;
  /// 1 - exposed / comm, or 1 without communication.
  double overlapFraction = 1;
  /// max(compute, comm): no schedule of this program on this device can
  /// take less, so stepTime / lowerBound() says how close a schedule is.
  double lowerBound() const { return std::max(computeTime, commTime); }
  /// FLOPs of one device's program and their rate over the step.
  double flops = 0;
  double flopsPerSecond = 0;
  /// flopsPerSecond over the peak of the element kind doing most FLOPs.
  double utilization = 0;
  /// Bytes one device sent over links (per hop counted once).
  double bytesSent = 0;
  /// The program's peak live bytes per device: filled by the caller (the
  /// simulator plays time, not memory; see Analysis/PeakMemory.h), -1 when
  /// not estimated.
  double peakMemoryBytes = -1;
  /// The chip's HBM (HardwareDescription::hbmCapacity); 0 when unknown.
  double hbmCapacityBytes = 0;
  /// Whether the program fits: known only with both figures.
  std::optional<bool> fitsInMemory() const {
    if (peakMemoryBytes < 0 || hbmCapacityBytes <= 0)
      return std::nullopt;
    return peakMemoryBytes <= hbmCapacityBytes;
  }
  std::vector<SimOpStats> ops;
  /// Simulator internals, for the speed benchmark: events played (of the
  /// played devices only).
  int64_t events = 0;
  /// With a trace: what it leaves out (devices, links, spans after its
  /// cut), or empty when it shows everything.
  std::string traceNote;
};

/// The most device-steps (devices x steps of the program) one simulation
/// plays: about ten minutes on one core of a 2020s server without a
/// symmetry. Checked before anything is allocated, so every device counts,
/// also those a symmetry would not play; checked again once the symmetry is
/// known, as the rounds the played devices play (each step once, each
/// collective as the rounds of its ring).
constexpr int64_t kMaxSimulatedDeviceSteps = int64_t(1) << 30;

/// Simulates `program` on all logical devices of `machine`. Fails with a
/// message on an inconsistent program (a permute whose pairs do not fit the
/// group, a done without its start, a collective start without its done, a
/// deadlock) and, before allocating
/// anything, on one larger than kMaxSimulatedDeviceSteps.
llvm::Expected<SimReport> simulate(const SimProgram &program,
                                   const MachineModel &machine,
                                   const SimOptions &options = {});

/// The report as JSON: the fields of SimReport under their names here
/// (`step_time_s`, `compute_time_s`, `comm_time_s`, `exposed_comm_time_s`,
/// `overlap_fraction`, `lower_bound_s`, `flops`, `flops_per_second`,
/// `utilization`, `bytes_sent`, `num_devices`, `simulated_devices`,
/// `symmetry`, `critical_device`, `hardware`, `topology`, `events`,
/// `peak_memory_bytes` and `hbm_capacity_bytes` (null
/// when unknown), `fits_in_memory` (null when either is), and `ops`: [{`label`,
/// `count`, `compute_time_s`, `exposed_comm_time_s`}]). `earliestFinish`
/// is not in it: only the scheduler's lower bound reads it.
void writeReportJSON(const SimReport &report, llvm::raw_ostream &os);
/// The same for people: aligned lines with units.
void printReport(const SimReport &report, llvm::raw_ostream &os);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SIMULATOR_SIMULATOR_H
