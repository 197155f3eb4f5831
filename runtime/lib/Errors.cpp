//===- Errors.cpp - Fatal errors of the runtime ---------------------------===//
//
// Formats fatal errors and hands them to the installed handler. The first
// thread to fail takes a lock it never releases, so a failure on one device
// does not interleave with (or get overtaken by) another device's report of
// the consequences.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/Errors.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace ovlrt;

static void defaultFatalHandler(const char *message) {
  std::fputs(message, stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::_Exit(kFatalExitCode);
}

static std::atomic<FatalHandler> fatalHandler{defaultFatalHandler};

FatalHandler ovlrt::setFatalHandler(FatalHandler handler) {
  return fatalHandler.exchange(handler ? handler : defaultFatalHandler);
}

std::string ovlrt::formatOp(const OpInfo &op) {
  std::string text = op.opName && *op.opName ? op.opName : "";
  if (op.location && *op.location)
    text += (text.empty() ? "at " : " at ") + std::string(op.location);
  return text;
}

void ovlrt::fatal(const std::string &message) {
  static std::mutex reporting;
  reporting.lock();
  std::string line = "ovlrt: error: " + message;
  fatalHandler.load()(line.c_str());
  std::_Exit(kFatalExitCode);
}

void ovlrt::fatal(int64_t device, const OpInfo &op,
                  const std::string &message) {
  std::string prefix = "device " + std::to_string(device) + ": ";
  std::string opText = formatOp(op);
  if (!opText.empty())
    prefix += opText + ": ";
  fatal(prefix + message);
}
