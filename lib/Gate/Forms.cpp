//===- Forms.cpp - The forms the gate chooses among, as text --------------===//

#include "OverlapDialect/Gate/Forms.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <iterator>
#include <utility>

using namespace mlir::ovl;

std::string mlir::ovl::describeLoop(const DecomposeOptions &loop) {
  if (loop.withGather)
    return loop.direction == RingLoopDirection::Split
               ? "gather-scatter, split, with the all_gather of its einsum"
               : "gather-scatter, with the all_gather of its einsum";
  std::string text = "unroll " + std::to_string(loop.unroll);
  switch (loop.direction) {
  case RingLoopDirection::Unidirectional:
    return text + ", unidirectional";
  case RingLoopDirection::Bidirectional:
    return text + ", bidirectional";
  case RingLoopDirection::Split:
    return text + ", split";
  }
  llvm_unreachable("unknown direction");
}

llvm::StringRef mlir::ovl::stringifyCollectiveForm(CollectiveForm form) {
  switch (form) {
  case CollectiveForm::Blocking:
    return "blocking";
  case CollectiveForm::Asynchronous:
    return "asynchronous";
  case CollectiveForm::Decomposed:
    return "decomposed";
  }
  llvm_unreachable("unknown collective form");
}

std::string mlir::ovl::formatTime(double seconds) {
  if (seconds == 0 || !std::isfinite(seconds))
    return seconds == 0 ? "0 s" : llvm::formatv("{0} s", seconds).str();
  static const std::pair<double, const char *> units[] = {
      {1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  double magnitude = std::fabs(seconds);
  size_t unit = 0;
  while (unit + 1 < std::size(units) && magnitude < units[unit].first)
    ++unit;
  double value = seconds / units[unit].first;
  // Two decimals below 10, one below 100, none above; a value that rounds
  // up to 1000 moves to the larger unit.
  auto decimals = [](double v) {
    v = std::fabs(v);
    return v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  };
  if (std::fabs(value) >= 999.5 && unit > 0) {
    --unit;
    value = seconds / units[unit].first;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.*f", decimals(value), value) << " "
     << units[unit].second;
  return text;
}

std::string mlir::ovl::describeEstimate(const CollectiveEstimate &estimate) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto form = [&](const FormEstimate &e, llvm::StringRef name) {
    os << formatTime(e.step) << " " << name << " (compute "
       << formatTime(e.compute) << ")";
  };
  os << "predicted ";
  form(estimate.blocking, "blocking");
  if (estimate.asynchronous) {
    os << ", ";
    form(*estimate.asynchronous, "asynchronous");
  }
  if (estimate.loops.size() == 1) {
    os << ", ";
    form(*estimate.decomposed, "decomposed");
  } else if (!estimate.loops.empty()) {
    os << ", decomposed ";
    llvm::interleaveComma(estimate.loops, os, [&](const LoopEstimate &loop) {
      os << formatTime(loop.estimate.step) << " (" << describeLoop(loop.loop)
         << "; compute " << formatTime(loop.estimate.compute) << ")";
    });
  }
  if (estimate.decomposed)
    os << ", gain " << formatTime(estimate.gain());
  return text;
}
