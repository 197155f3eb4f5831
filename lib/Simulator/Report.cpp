//===- Report.cpp - The simulation report as JSON and as text -------------===//
//
// writeReportJSON emits the fields of SimReport under the snake_case names
// documented in Simulator.h, for scripts and the benchmarks; printReport
// prints the same figures for people, with units scaled to the value
// (s/ms/us/ns, B/KB/MB/GB, GFLOP/s/TFLOP/s) and fractions as percentages.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Simulator/Simulator.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

using namespace mlir::ovl;

void mlir::ovl::writeReportJSON(const SimReport &report,
                                llvm::raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("hardware", report.hardware);
    json.attribute("topology", report.topology);
    json.attribute("num_devices", report.numDevices);
    json.attribute("simulated_devices", report.simulatedDevices);
    json.attribute("symmetry", report.symmetry);
    json.attribute("critical_device", report.criticalDevice);
    json.attribute("step_time_s", report.stepTime);
    json.attribute("compute_time_s", report.computeTime);
    json.attribute("comm_time_s", report.commTime);
    json.attribute("exposed_comm_time_s", report.exposedCommTime);
    json.attribute("overlap_fraction", report.overlapFraction);
    json.attribute("lower_bound_s", report.lowerBound());
    json.attribute("flops", report.flops);
    json.attribute("flops_per_second", report.flopsPerSecond);
    json.attribute("utilization", report.utilization);
    json.attribute("bytes_sent", report.bytesSent);
    json.attribute("events", report.events);
    auto known = [](double value, bool positive) -> llvm::json::Value {
      if (value < 0 || (positive && value == 0))
        return nullptr;
      return value;
    };
    json.attribute("peak_memory_bytes", known(report.peakMemoryBytes, false));
    json.attribute("hbm_capacity_bytes", known(report.hbmCapacityBytes, true));
    std::optional<bool> fits = report.fitsInMemory();
    json.attribute("fits_in_memory", fits ? llvm::json::Value(*fits)
                                          : llvm::json::Value(nullptr));
    json.attributeArray("ops", [&] {
      for (const SimOpStats &op : report.ops)
        json.object([&] {
          json.attribute("label", op.label);
          json.attribute("count", op.count);
          json.attribute("compute_time_s", op.computeSeconds);
          json.attribute("exposed_comm_time_s", op.exposedSeconds);
        });
    });
  });
  os << "\n";
}

/// `value` in the largest of `units` (each `factor` times the next smaller
/// one, the first being the base unit) that keeps it at least 1.
static std::string scaled(double value, llvm::ArrayRef<const char *> units,
                          double factor, bool descending) {
  // Descending: units are s, ms, us, ns (dividing); ascending: B, KB, MB, GB
  // (multiplying).
  size_t unit = 0;
  double shown = value;
  if (descending) {
    while (unit + 1 < units.size() && shown != 0 && std::fabs(shown) < 1) {
      shown *= factor;
      ++unit;
    }
  } else {
    while (unit + 1 < units.size() && std::fabs(shown) >= factor) {
      shown /= factor;
      ++unit;
    }
  }
  return llvm::formatv("{0:F3} {1}", shown, units[unit]).str();
}

static std::string formatTime(double seconds) {
  return scaled(seconds, {"s", "ms", "us", "ns"}, 1000, /*descending=*/true);
}

static std::string formatBytes(double bytes) {
  return scaled(bytes, {"B", "KB", "MB", "GB", "TB"}, 1000,
                /*descending=*/false);
}

static std::string formatRate(double flopsPerSecond) {
  if (flopsPerSecond >= 1e12)
    return llvm::formatv("{0:F2} TFLOP/s", flopsPerSecond / 1e12).str();
  return llvm::formatv("{0:F2} GFLOP/s", flopsPerSecond / 1e9).str();
}

static std::string formatPercent(double fraction) {
  return llvm::formatv("{0:F1}%", 100 * fraction).str();
}

void mlir::ovl::printReport(const SimReport &report, llvm::raw_ostream &os) {
  auto line = [&](llvm::StringRef name, const llvm::Twine &value) {
    os << llvm::formatv("{0,-20}", name) << value << "\n";
  };
  line("hardware", report.hardware);
  line("topology", report.topology);
  line("devices", llvm::formatv("{0} (critical: device {1})", report.numDevices,
                                report.criticalDevice)
                      .str());
  line("symmetry", report.symmetry);
  line("step time", formatTime(report.stepTime));
  line("compute", formatTime(report.computeTime));
  line("communication", formatTime(report.commTime));
  line("exposed comm", formatTime(report.exposedCommTime));
  line("overlap", formatPercent(report.overlapFraction));
  line("lower bound",
       formatTime(report.lowerBound()) + " (step time / bound " +
           llvm::formatv("{0:F3}", report.lowerBound() > 0
                                       ? report.stepTime / report.lowerBound()
                                       : 1.0)
               .str() +
           ")");
  line("FLOPs", llvm::formatv("{0:E3}", report.flops).str());
  line("FLOP rate", formatRate(report.flopsPerSecond));
  line("utilization", formatPercent(report.utilization));
  line("bytes sent", formatBytes(report.bytesSent));
  line("events", llvm::Twine(report.events));
  if (report.peakMemoryBytes >= 0) {
    std::string memory = formatBytes(report.peakMemoryBytes) + " per device";
    if (std::optional<bool> fits = report.fitsInMemory())
      memory += " of " + formatBytes(report.hbmCapacityBytes) + " HBM" +
                (*fits ? "" : " (does not fit)");
    line("peak memory", memory);
  }
  if (report.ops.empty())
    return;

  size_t width = 2;
  for (const SimOpStats &op : report.ops)
    width = std::max(width, op.label.size());
  os << "\n"
     << llvm::left_justify("op", width)
     << llvm::formatv("  {0,8}  {1,14}  {2,14}\n", "count", "compute",
                      "exposed comm");
  for (const SimOpStats &op : report.ops)
    os << llvm::left_justify(op.label, width)
       << llvm::formatv("  {0,8}  {1,14}  {2,14}\n", op.count,
                        formatTime(op.computeSeconds),
                        formatTime(op.exposedSeconds));
}
