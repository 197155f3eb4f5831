//===- ChromeTrace.cpp - Chrome / Perfetto trace of a simulation ----------===//
//
// Writes the spans the simulator recorded in the Trace Event Format that
// chrome://tracing and ui.perfetto.dev load: a "traceEvents" array of "X"
// (complete) events with ts and dur in microseconds, and "M" (metadata)
// events naming processes and threads. Every traced device is a process
// with a compute, a wait and in-flight threads (one per communication it
// had in flight at once: Perfetto draws overlapping spans of one thread
// wrongly); the links of the traced devices are one more process with one
// thread per link that carried data. "otherData" says what the trace
// leaves out, so that a reader of a cut trace knows it is one.
//
//===----------------------------------------------------------------------===//

#include "ChromeTrace.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <limits>
#include <optional>

using namespace mlir::ovl;
using namespace mlir::ovl::detail;

static constexpr int64_t kComputeTid = 0, kWaitTid = 1, kFirstCommTid = 2;

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

/// "0-3,5,7-9" for ascending `values`.
static std::string describeRanges(llvm::ArrayRef<int64_t> values) {
  std::string result;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
      ++j;
    result += (result.empty() ? "" : ",") + std::to_string(values[i]);
    if (j > i)
      result += "-" + std::to_string(values[j]);
    i = j + 1;
  }
  return result;
}

std::vector<int64_t>
mlir::ovl::detail::linksOfDevices(const Topology &topology,
                                  const DeviceAssignment &assignment,
                                  llvm::ArrayRef<int64_t> devices) {
  std::vector<int64_t> links;
  llvm::ArrayRef<int64_t> extents = topology.getExtents();
  int64_t rank = static_cast<int64_t>(extents.size());
  for (int64_t logical : devices) {
    int64_t device = assignment.physical(logical);
    // Link ids as Topology numbers them: a switch's 2d egress and 2d + 1
    // ingress; a torus link (d * rank + dim) * 2 + (negative ? 1 : 0)
    // leaves d, and enters d from its neighbour on the other side.
    if (topology.getKind() == InterconnectKind::Switch) {
      links.push_back(2 * device);
      links.push_back(2 * device + 1);
      continue;
    }
    llvm::SmallVector<int64_t, 3> coords = topology.coordinates(device);
    for (int64_t dim = 0; dim < rank; ++dim)
      for (int64_t negative = 0; negative < 2; ++negative) {
        links.push_back((device * rank + dim) * 2 + negative);
        llvm::SmallVector<int64_t, 3> from = coords;
        from[dim] =
            (coords[dim] + (negative ? 1 : -1) + extents[dim]) % extents[dim];
        links.push_back((topology.deviceAt(from) * rank + dim) * 2 + negative);
      }
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

/// The logical device at each physical one, -1 where none is placed.
static std::vector<int64_t>
logicalOfPhysical(const Topology &topology,
                  const DeviceAssignment &assignment) {
  std::vector<int64_t> logicalAt(topology.getNumDevices(), -1);
  for (int64_t d = 0, e = assignment.getNumLogicalDevices(); d < e; ++d)
    logicalAt[assignment.physical(d)] = d;
  return logicalAt;
}

/// The logical device that `logical` becomes under the torus translation
/// taking link `from` to link `to` (of one link class, so that the
/// translation is one of the symmetry's, which keeps devices placed).
static int64_t translate(const Topology &topology,
                         const DeviceAssignment &assignment,
                         llvm::ArrayRef<int64_t> logicalAt, int64_t from,
                         int64_t to, int64_t logical) {
  if (from == to)
    return logical;
  // Torus link ids are (device * rank + dim) * 2 + direction.
  llvm::ArrayRef<int64_t> extents = topology.getExtents();
  int64_t perDevice = static_cast<int64_t>(extents.size()) * 2;
  llvm::SmallVector<int64_t, 3> fromAt = topology.coordinates(from / perDevice);
  llvm::SmallVector<int64_t, 3> toAt = topology.coordinates(to / perDevice);
  llvm::SmallVector<int64_t, 3> at =
      topology.coordinates(assignment.physical(logical));
  for (size_t dim = 0; dim < extents.size(); ++dim)
    at[dim] =
        ((at[dim] + toAt[dim] - fromAt[dim]) % extents[dim] + extents[dim]) %
        extents[dim];
  int64_t image = logicalAt[topology.deviceAt(at)];
  assert(image >= 0 && "a symmetry's translation left the placed devices");
  return image;
}

/// Gives each comm span of one device the first in-flight thread free at
/// its start; returns the number of threads.
static uint32_t assignLanes(const std::vector<TraceRecord::CommSpan> &comm,
                            std::vector<uint32_t> &spans,
                            std::vector<uint32_t> &laneOf) {
  std::sort(spans.begin(), spans.end(), [&](uint32_t a, uint32_t b) {
    return comm[a].start < comm[b].start;
  });
  std::vector<double> busyUntil;
  for (uint32_t i : spans) {
    auto free = std::find_if(busyUntil.begin(), busyUntil.end(),
                             [&](double end) { return end <= comm[i].start; });
    if (free == busyUntil.end())
      free = busyUntil.insert(free, 0.0);
    *free = comm[i].start + comm[i].duration;
    laneOf[i] = static_cast<uint32_t>(free - busyUntil.begin());
  }
  return static_cast<uint32_t>(busyUntil.size());
}

std::string mlir::ovl::detail::writeChromeTrace(
    const TraceRecord &record, const SimProgram &program,
    const Topology &topology, const DeviceAssignment &assignment,
    const DeviceSymmetry &symmetry, llvm::ArrayRef<int64_t> devices,
    int64_t maxSpans, llvm::raw_ostream &os) {
  auto labelOf = [&](uint32_t label) -> llvm::StringRef {
    if (label >= program.labels.size())
      return "";
    return program.labels[label];
  };
  int64_t numDevices = assignment.getNumLogicalDevices();
  int64_t linksPid = numDevices;
  size_t numPlayed = symmetry.getNumOrbits();

  // The spans of each played device and link class.
  std::vector<std::vector<uint32_t>> computeOf(numPlayed), waitsOf(numPlayed),
      commOf(numPlayed);
  for (auto [i, span] : llvm::enumerate(record.compute))
    computeOf[span.device].push_back(i);
  for (auto [i, span] : llvm::enumerate(record.waits))
    waitsOf[span.device].push_back(i);
  for (auto [i, span] : llvm::enumerate(record.comm))
    commOf[span.device].push_back(i);
  std::vector<uint32_t> laneOf(record.comm.size()), lanesOf(numPlayed);
  for (size_t p = 0; p < numPlayed; ++p)
    lanesOf[p] = assignLanes(record.comm, commOf[p], laneOf);
  // Per link class, its entries of record.links; transferOf[j]: the
  // transfer of entry j.
  std::vector<std::vector<uint32_t>> transfersOf(symmetry.getNumLinkClasses());
  std::vector<uint32_t> transferOf(record.links.size());
  for (auto [i, span] : llvm::enumerate(record.transfers))
    for (uint32_t j = span.linksBegin; j < span.linksEnd; ++j) {
      transfersOf[record.links[j]].push_back(j);
      transferOf[j] = i;
    }
  std::vector<int64_t> links;
  for (int64_t link : linksOfDevices(topology, assignment, devices))
    if (!transfersOf[symmetry.linkClassOf(link)].empty())
      links.push_back(link);

  // The cut: the start of the first span past the budget; every span
  // starting before it is written.
  std::vector<double> starts;
  for (int64_t logical : devices) {
    uint32_t p = symmetry.orbitOf(logical);
    for (uint32_t i : computeOf[p])
      starts.push_back(record.compute[i].start);
    for (uint32_t i : waitsOf[p])
      starts.push_back(record.waits[i].start);
    for (uint32_t i : commOf[p])
      starts.push_back(record.comm[i].start);
  }
  for (int64_t link : links)
    for (uint32_t j : transfersOf[symmetry.linkClassOf(link)])
      starts.push_back(record.transfers[transferOf[j]].start);
  int64_t total = static_cast<int64_t>(starts.size());
  double cut = std::numeric_limits<double>::infinity();
  if (maxSpans > 0 && total > maxSpans) {
    std::nth_element(starts.begin(), starts.begin() + maxSpans, starts.end());
    cut = starts[maxSpans];
  }
  int64_t written = 0;
  for (double start : starts)
    written += start < cut;

  std::string note;
  if (static_cast<int64_t>(devices.size()) < numDevices)
    note = llvm::formatv("the trace shows devices {0} of {1} and their {2} "
                         "links that carried data",
                         describeRanges(devices), numDevices, links.size());
  if (written < total)
    note += llvm::formatv("{0}{1} of {2} spans left out: those from "
                          "{3:F3} ms on",
                          note.empty() ? "" : "; ", total - written, total,
                          micros(cut) / 1e3);

  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("displayTimeUnit", "ns");
    json.attributeObject("otherData", [&] {
      json.attribute("devices", numDevices);
      json.attribute("traced_devices", describeRanges(devices));
      json.attribute("spans", total);
      json.attribute("spans_written", written);
      if (written < total)
        json.attribute("cut_us", micros(cut));
      json.attribute("note", note);
    });
    json.attributeArray("traceEvents", [&] {
      for (int64_t d : devices) {
        writeName(json, "process_name", d, std::nullopt,
                  "device " + std::to_string(d));
        writeName(json, "thread_name", d, kComputeTid, "compute");
        writeName(json, "thread_name", d, kWaitTid, "wait");
        for (uint32_t lane = 0; lane < lanesOf[symmetry.orbitOf(d)]; ++lane)
          writeName(json, "thread_name", d, kFirstCommTid + lane,
                    "in flight " + std::to_string(lane + 1));
      }
      writeName(json, "process_name", linksPid, std::nullopt, "links");
      for (int64_t link : links)
        writeName(json, "thread_name", linksPid, link,
                  topology.describeLink(link));

      for (int64_t d : devices) {
        uint32_t p = symmetry.orbitOf(d);
        for (uint32_t i : computeOf[p]) {
          const TraceRecord::DeviceSpan &span = record.compute[i];
          if (span.start < cut)
            json.object([&] {
              writeSpan(json, labelOf(span.label), "compute", d, kComputeTid,
                        span.start, span.duration);
            });
        }
        for (uint32_t i : waitsOf[p]) {
          const TraceRecord::DeviceSpan &span = record.waits[i];
          if (span.start < cut)
            json.object([&] {
              writeSpan(json, labelOf(span.label), "wait", d, kWaitTid,
                        span.start, span.duration);
            });
        }
        for (uint32_t i : commOf[p]) {
          const TraceRecord::CommSpan &span = record.comm[i];
          if (span.start < cut)
            json.object([&] {
              writeSpan(json, labelOf(span.label),
                        span.permute ? "permute" : "collective", d,
                        kFirstCommTid + laneOf[i], span.start, span.duration);
            });
        }
      }
      std::vector<int64_t> logicalAt = logicalOfPhysical(topology, assignment);
      for (int64_t link : links)
        for (uint32_t j : transfersOf[symmetry.linkClassOf(link)]) {
          const TraceRecord::TransferSpan &span =
              record.transfers[transferOf[j]];
          if (!(span.start < cut))
            continue;
          // With a symmetry the played transfer crossed another link of
          // this class: this link carries its translate.
          auto onLink = [&](int64_t logical) {
            return translate(topology, assignment, logicalAt,
                             record.playedLinks[j], link, logical);
          };
          int64_t src = onLink(span.src), dst = onLink(span.dst);
          json.object([&] {
            writeSpan(json,
                      "transfer " + std::to_string(src) + " -> " +
                          std::to_string(dst),
                      "link", linksPid, link, span.start, span.duration);
            json.attributeObject("args", [&] {
              json.attribute("bytes", span.bytes);
              json.attribute("op", labelOf(span.label));
              json.attribute("src", src);
              json.attribute("dst", dst);
            });
          });
        }
    });
  });
  os << "\n";
  return note;
}
