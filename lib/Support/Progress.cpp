//===- Progress.cpp - How far long work got, on stderr --------------------===//

#include "OverlapDialect/Support/Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>

using namespace overlap;

static std::atomic<ProgressMode> progressMode{ProgressMode::Auto};
static std::atomic<double> progressInterval{1};

void overlap::setProgressMode(ProgressMode mode, double interval) {
  progressMode = mode;
  progressInterval = interval;
}

Progress::Progress(llvm::StringRef task, uint64_t total, llvm::StringRef unit)
    : task(task), unit(unit), total(total),
      start(std::chrono::steady_clock::now()), last(start) {
  ProgressMode mode = progressMode;
  interval = progressInterval;
  enabled = mode == ProgressMode::Always ||
            (mode == ProgressMode::Auto &&
             llvm::sys::Process::StandardErrIsDisplayed());
}

Progress::~Progress() {
  if (printed)
    print("done");
}

void Progress::update(uint64_t newDone, llvm::StringRef detail) {
  done = newDone;
  if (!enabled)
    return;
  auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last).count() < interval)
    return;
  last = now;
  print(detail);
}

void Progress::print(llvm::StringRef detail) {
  printed = true;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::errs() << task << ": " << done;
  if (total)
    llvm::errs() << "/" << total;
  llvm::errs() << " " << unit;
  if (!detail.empty())
    llvm::errs() << " (" << detail << ")";
  llvm::errs() << ", " << llvm::format("%.0f", seconds) << " s\n";
}
