//===- Report.cpp - What overlap-run prints about a run -------------------===//

#include "OverlapDialect/Runner/Report.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace llvm;
using namespace overlap;

static uint64_t sumBytes(const std::vector<TensorType> &types) {
  uint64_t bytes = 0;
  for (const TensorType &type : types)
    bytes += type.numBytes();
  return bytes;
}

uint64_t overlap::estimateRunBytes(const Program &program,
                                   const Program *reference, int64_t devices) {
  uint64_t inputs = sumBytes(program.getInputTypes());
  auto stepBytes = [&](const Program &p) -> uint64_t {
    if (p.getPeakBytesPerDevice() > 0)
      return p.getPeakBytesPerDevice();
    return sumBytes(p.getInputTypes()) + sumBytes(p.getOutputTypes());
  };
  uint64_t step = stepBytes(program);
  uint64_t outputs = sumBytes(program.getOutputTypes());
  if (reference) {
    step = std::max(step, stepBytes(*reference));
    outputs += sumBytes(reference->getOutputTypes());
  }
  return static_cast<uint64_t>(devices) * (inputs + step + outputs);
}

/// A number of bytes from a /proc or /sys file's first line, if it is one.
static std::optional<uint64_t> readBytes(StringRef path) {
  auto file = MemoryBuffer::getFileAsStream(path);
  if (!file)
    return std::nullopt;
  uint64_t value;
  if ((*file)->getBuffer().split('\n').first.trim().getAsInteger(10, value))
    return std::nullopt;
  return value;
}

std::optional<uint64_t> overlap::availableMemoryBytes() {
  std::optional<uint64_t> available;
  if (auto meminfo = MemoryBuffer::getFileAsStream("/proc/meminfo")) {
    StringRef rest = (*meminfo)->getBuffer();
    while (!rest.empty()) {
      StringRef line;
      std::tie(line, rest) = rest.split('\n');
      if (!line.consume_front("MemAvailable:"))
        continue;
      StringRef number = line.trim();
      uint64_t kib;
      if (number.consume_back("kB") && !number.trim().getAsInteger(10, kib))
        available = kib * 1024;
    }
  }
  // In a container the cgroup's limit is what counts ("max" reads as no
  // number: no limit).
  std::optional<uint64_t> limit = readBytes("/sys/fs/cgroup/memory.max");
  std::optional<uint64_t> used = readBytes("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    uint64_t left = *limit > *used ? *limit - *used : 0;
    available = available ? std::min(*available, left) : left;
  }
  return available;
}

Error overlap::checkRunMemory(uint64_t needed, int64_t devices) {
  std::optional<uint64_t> available = availableMemoryBytes();
  if (!available || needed <= *available)
    return Error::success();
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  return createStringError(
      inconvertibleErrorCode(),
      formatv("needs {0:f1} GiB for {1} device(s), {2:f1} GiB available",
              needed / gib, devices, *available / gib));
}

static void printTensor(raw_ostream &os, const HostTensor &tensor) {
  int64_t count = tensor.type().numElements();
  os << "[";
  bool integer = isIntegerType(tensor.type().dtype);
  for (int64_t i = 0; i < count; ++i) {
    os << (i ? ", " : "");
    if (integer)
      os << tensor.getAsInt64(i);
    else
      os << format("%g", tensor.getAsDouble(i));
  }
  os << "]";
}

/// An element for the JSON report: the exact integer, or a double; JSON
/// has no infinities or NaN, so those are strings ("inf", "-inf", "nan").
static json::Value jsonValue(double value, std::optional<int64_t> exact) {
  if (exact)
    return *exact;
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

static std::string formatPosition(ArrayRef<int64_t> position) {
  std::string text;
  for (int64_t index : position)
    text += (text.empty() ? "" : ", ") + std::to_string(index);
  return "[" + text + "]";
}

static void printJson(const RunReport &report, raw_ostream &os) {
  const LaunchResult &run = *report.run;
  std::vector<double> sorted = run.stepSeconds;
  std::sort(sorted.begin(), sorted.end());
  json::Object result{
      {"program", report.programPath},
      {"entry", report.entryName},
      {"devices", report.devices},
      {"transport", report.transport},
      {"compile_seconds", report.compileSeconds},
      {"compile_cache", stringifyCacheUse(report.compileCache)},
      {"run_seconds", report.runSeconds},
      {"target_cpu", report.targetCpu},
      {"register_tile", json::Array{report.tileRows, report.tileColumns}},
      {"steps", static_cast<int64_t>(run.stepSeconds.size())},
      {"step_seconds_median", sorted[sorted.size() / 2]},
      {"step_seconds_min", sorted.front()},
      {"step_seconds", json::Array(run.stepSeconds)},
  };
  if (report.referenceCompileCache)
    result["reference_compile_cache"] =
        stringifyCacheUse(*report.referenceCompileCache);
  if (run.changedStep)
    result["changed_step"] = json::Object{{"device", run.changedStep->device},
                                          {"step", run.changedStep->step + 1}};
  if (const std::optional<Comparison> &comparison = report.comparison) {
    json::Object compared{
        {"reference", report.referencePath},
        {"equal", comparison->equal},
        {"rtol_relative_to", stringifyRelativeTo(comparison->relativeTo)},
        {"max_abs_error", comparison->maxAbsError},
        {"max_rel_error", comparison->maxRelError}};
    if (!comparison->structuralError.empty())
      compared["error"] = comparison->structuralError;
    if (comparison->firstMismatch) {
      const Mismatch &m = *comparison->firstMismatch;
      compared["first_mismatch"] =
          json::Object{{"device", m.device},
                       {"output", m.output},
                       {"position", json::Array(m.position)},
                       {"actual", jsonValue(m.actual, m.actualInt)},
                       {"expected", jsonValue(m.expected, m.expectedInt)}};
    }
    result["comparison"] = std::move(compared);
  }
  if (report.printOutputs) {
    json::Array devices;
    for (const auto &outputs : run.outputs) {
      json::Array tensors;
      for (const HostTensor &tensor : outputs) {
        json::Array values;
        bool integer = isIntegerType(tensor.type().dtype);
        for (int64_t i = 0; i < tensor.type().numElements(); ++i)
          values.push_back(
              jsonValue(tensor.getAsDouble(i),
                        integer ? std::optional<int64_t>(tensor.getAsInt64(i))
                                : std::nullopt));
        tensors.push_back(json::Object{{"type", tensor.type().str()},
                                       {"values", std::move(values)}});
      }
      devices.push_back(std::move(tensors));
    }
    result["outputs"] = std::move(devices);
  }
  os << formatv("{0:2}", json::Value(std::move(result))) << "\n";
}

static void printText(const RunReport &report, raw_ostream &os) {
  const LaunchResult &run = *report.run;
  std::vector<double> sorted = run.stepSeconds;
  std::sort(sorted.begin(), sorted.end());
  os << formatv("{0}: @{1} on {2} devices ({3})\n", report.programPath,
                report.entryName, report.devices, report.transport);
  std::string cache = ("cache " + stringifyCacheUse(report.compileCache)).str();
  if (report.referenceCompileCache)
    cache += (", reference cache " +
              stringifyCacheUse(*report.referenceCompileCache))
                 .str();
  os << formatv("  compile {0:f3} s ({1}), run {2:f3} s, for {3} (register "
                "tile {4}x{5})\n",
                report.compileSeconds, cache, report.runSeconds,
                report.targetCpu, report.tileRows, report.tileColumns);
  os << formatv("  step time: median {0:f3} ms, min {1:f3} ms over {2} "
                "step(s)\n",
                sorted[sorted.size() / 2] * 1e3, sorted.front() * 1e3,
                run.stepSeconds.size());
  if (run.changedStep)
    os << formatv("  NOT THE SAME ON EVERY STEP: step {0}'s outputs on device "
                  "{1} differ from step 1's, with the same inputs\n",
                  run.changedStep->step + 1, run.changedStep->device);
  if (report.printOutputs) {
    for (auto [device, outputs] : llvm::enumerate(run.outputs)) {
      for (auto [i, tensor] : llvm::enumerate(outputs)) {
        os << formatv("  device {0} output {1} ({2}): ", device, i,
                      tensor.type().str());
        printTensor(os, tensor);
        os << "\n";
      }
    }
  }
  if (const std::optional<Comparison> &comparison = report.comparison) {
    os << formatv("  reference {0}: {1} (max abs error {2:e}, max rel "
                  "error {3:e}; rtol relative to {4})\n",
                  report.referencePath,
                  comparison->equal ? "equal" : "NOT EQUAL",
                  comparison->maxAbsError, comparison->maxRelError,
                  stringifyRelativeTo(comparison->relativeTo));
    if (!comparison->structuralError.empty())
      os << "  " << comparison->structuralError << "\n";
    if (comparison->firstMismatch) {
      const Mismatch &m = *comparison->firstMismatch;
      os << formatv("  first difference: device {0} output {1} at {2}: ",
                    m.device, m.output, formatPosition(m.position));
      if (m.actualInt)
        os << *m.actualInt << " vs reference " << *m.expectedInt << "\n";
      else
        os << format("%g vs reference %g\n", m.actual, m.expected);
    }
  }
}

void overlap::printRunReport(const RunReport &report, bool json,
                             raw_ostream &os) {
  if (json)
    printJson(report, os);
  else
    printText(report, os);
}
