//===- Progress.h - How far long work got, on stderr ------------*- C++ -*-===//
//
// The gate of a whole training step can price thousands of windows; a user
// at a terminal sees how far it got. A line a second at most, on stderr,
// only where someone reads it: by default when stderr is a terminal;
// overlap-opt's --quiet turns it off and --progress on.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_PROGRESS_H
#define OVERLAPDIALECT_SUPPORT_PROGRESS_H

#include "OverlapDialect/Support/NumericRange.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace overlap {

/// Whether long work reports its progress.
enum class ProgressMode {
  /// When stderr is a terminal (the default).
  Auto,
  /// Always (the tools' --progress).
  Always,
  /// Never (the tools' --quiet).
  Never,
};

namespace ranges {
/// overlap-opt --progress-every, in seconds.
inline constexpr NumericRange kProgressInterval{false, 0, 3600};
} // namespace ranges

/// Sets the mode for the whole process, and the least seconds between two
/// lines of one piece of work (0 in tests: a line per step).
void setProgressMode(ProgressMode mode, double interval = 1);

/// One piece of long work: "TASK: DONE/TOTAL UNIT (DETAIL), N s" on stderr
/// ("TASK: DONE UNIT ..." for a total of 0, unknown)
/// when a second passed since the last line (or since the start), and a
/// last line when it ends, if it printed any.
class Progress {
public:
  Progress(llvm::StringRef task, uint64_t total, llvm::StringRef unit);
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;
  ~Progress();

  /// `done` of the total are done; `detail` says more (may be empty).
  void update(uint64_t done, llvm::StringRef detail = {});

private:
  void print(llvm::StringRef detail);

  std::string task, unit;
  uint64_t total, done = 0;
  double interval;
  bool enabled, printed = false;
  std::chrono::steady_clock::time_point start, last;
};

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_PROGRESS_H
