//===- Errors.h - Fatal errors of the runtime -------------------*- C++ -*-===//
//
// A collective that goes wrong in an SPMD program (peers disagreeing, a peer
// missing, a malformed permutation) cannot be recovered from: the runtime
// reports it in one line on stderr, naming the device and the operation's
// source location, and ends the process with exit code 70. The handler is
// replaceable so that a host can add its own reporting.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_ERRORS_H
#define OVLRT_ERRORS_H

#include <cstdint>
#include <string>

namespace ovlrt {

/// The exit code of the default fatal handler (EX_SOFTWARE).
constexpr int kFatalExitCode = 70;

/// The operation a runtime call implements, for error messages: e.g.
/// {"ovl.all_gather", "mlp.mlir:12:8"}. Either may be null. The strings must
/// stay valid for the duration of the call.
struct OpInfo {
  const char *opName = nullptr;
  const char *location = nullptr;
};

/// "ovl.all_gather at mlp.mlir:12:8", or as much of it as is known.
std::string formatOp(const OpInfo &op);

/// Receives the complete message ("ovlrt: error: ..."). It should not
/// return; if it does, the process exits with kFatalExitCode anyway.
using FatalHandler = void (*)(const char *message);

/// Installs `handler` (null restores the default, which prints the message to
/// stderr and calls std::_Exit(kFatalExitCode)) and returns the previous one.
FatalHandler setFatalHandler(FatalHandler handler);

/// Reports "ovlrt: error: <message>" and ends the process. Safe to call from
/// several threads at once: one message is reported, the others wait.
[[noreturn]] void fatal(const std::string &message);

/// Reports "ovlrt: error: device <device>: <op> at <location>: <message>".
[[noreturn]] void fatal(int64_t device, const OpInfo &op,
                        const std::string &message);

} // namespace ovlrt

#endif // OVLRT_ERRORS_H
