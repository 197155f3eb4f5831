//===- CommandLine.h - The command line of overlap's tools ------*- C++ -*-===//
//
// What overlap-opt, overlap-run and overlap-sim share about their command
// lines: the exit statuses and one way to parse flags.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_COMMANDLINE_H
#define OVERLAPDIALECT_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/StringRef.h"

namespace overlap {

struct NumericRange;

/// The exit statuses of every overlap tool (docs/README.md, "Exit status").
enum ExitStatus : int {
  /// The tool did what it was asked.
  ExitSuccess = 0,
  /// A negative result: the outputs differ from the reference, the program
  /// cannot be simulated, a pass or the verifier rejects the program.
  ExitNegative = 1,
  /// A usage or input error: an unknown flag, a bad value, a missing file.
  ExitUsage = 2,
};

/// The sentence every tool's --help ends its overview with.
extern const char *const kExitStatusHelp;

/// Parses the command line as llvm::cl::ParseCommandLineOptions does, but
/// first refuses any flag no option is named (with the nearest name as a
/// suggestion): cl reads such a flag as a group of one-letter flags when
/// it begins with one, and every one-letter option groups, so that
/// `--hardware` in a tool without that flag was `-h`, the help, exit 0.
/// On any error it prints it and exits with ExitUsage.
void parseToolCommandLine(int argc, const char *const *argv,
                          llvm::StringRef overview);

/// Checks the value of a numeric flag against its range (NumericRange.h),
/// after parseToolCommandLine: out of it, prints "<tool>: error: <flag>
/// must be <range>, got <value>" and exits with ExitUsage.
void checkFlagValue(llvm::StringRef flag, const NumericRange &range,
                    double value);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_COMMANDLINE_H
