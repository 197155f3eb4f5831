//===- ChromeTrace.cpp - Chrome / Perfetto trace of a simulation ----------===//
//
// Writes the spans the simulator recorded in the Trace Event Format that
// chrome://tracing and ui.perfetto.dev load: a "traceEvents" array of "X"
// (complete) events with ts and dur in microseconds, and "M" (metadata)
// events naming processes and threads. Every device is a process with a
// compute and a wait thread; the links are one more process with one thread
// per link that carried data.
//
//===----------------------------------------------------------------------===//

#include "ChromeTrace.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <optional>

using namespace mlir::ovl;
using namespace mlir::ovl::detail;

static constexpr int64_t kComputeTid = 0, kWaitTid = 1;

/// Seconds to the trace's microseconds.
static double micros(double seconds) { return seconds * 1e6; }

/// A metadata event naming process `pid` or, with `tid`, one of its threads.
static void writeName(llvm::json::OStream &json, llvm::StringRef what,
                      int64_t pid, std::optional<int64_t> tid,
                      llvm::StringRef name) {
  json.object([&] {
    json.attribute("name", what);
    json.attribute("ph", "M");
    json.attribute("pid", pid);
    if (tid)
      json.attribute("tid", *tid);
    json.attributeObject("args", [&] { json.attribute("name", name); });
  });
}

static void writeSpan(llvm::json::OStream &json, llvm::StringRef name,
                      llvm::StringRef category, int64_t pid, int64_t tid,
                      double start, double duration) {
  json.attribute("name", name);
  json.attribute("cat", category);
  json.attribute("ph", "X");
  json.attribute("pid", pid);
  json.attribute("tid", tid);
  json.attribute("ts", micros(start));
  json.attribute("dur", micros(duration));
}

void mlir::ovl::detail::writeChromeTrace(const TraceRecord &record,
                                         const SimProgram &program,
                                         const Topology &topology,
                                         int64_t numDevices,
                                         llvm::raw_ostream &os) {
  auto labelOf = [&](uint32_t label) -> llvm::StringRef {
    if (label >= program.labels.size())
      return "";
    return program.labels[label];
  };
  int64_t linksPid = numDevices;
  std::vector<int64_t> usedLinks(record.links);
  std::sort(usedLinks.begin(), usedLinks.end());
  usedLinks.erase(std::unique(usedLinks.begin(), usedLinks.end()),
                  usedLinks.end());

  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("displayTimeUnit", "ns");
    json.attributeArray("traceEvents", [&] {
      for (int64_t d = 0; d < numDevices; ++d) {
        writeName(json, "process_name", d, std::nullopt,
                  "device " + std::to_string(d));
        writeName(json, "thread_name", d, kComputeTid, "compute");
        writeName(json, "thread_name", d, kWaitTid, "wait");
      }
      writeName(json, "process_name", linksPid, std::nullopt, "links");
      for (int64_t link : usedLinks)
        writeName(json, "thread_name", linksPid, link,
                  topology.describeLink(link));

      for (const TraceRecord::DeviceSpan &span : record.compute)
        json.object([&] {
          writeSpan(json, labelOf(span.label), "compute", span.device,
                    kComputeTid, span.start, span.duration);
        });
      for (const TraceRecord::DeviceSpan &span : record.waits)
        json.object([&] {
          writeSpan(json, labelOf(span.label), "wait", span.device, kWaitTid,
                    span.start, span.duration);
        });
      for (const TraceRecord::TransferSpan &span : record.transfers) {
        std::string name = "transfer " + std::to_string(span.src) + " -> " +
                           std::to_string(span.dst);
        for (uint32_t i = span.linksBegin; i < span.linksEnd; ++i)
          json.object([&] {
            writeSpan(json, name, "link", linksPid, record.links[i], span.start,
                      span.duration);
            json.attributeObject("args", [&] {
              json.attribute("bytes", span.bytes);
              json.attribute("src", span.src);
              json.attribute("dst", span.dst);
            });
          });
      }
    });
  });
  os << "\n";
}
