//===- PassOptionCheck.h - Checks the options of overlap's passes -*- C++
//-*-===//
//
// MLIR reports a pass option it cannot parse with LLVM's message for a
// command-line flag (or none) and then an empty error; overlap-opt checks
// the options of overlap's passes first, against the table generated from
// their TableGen declarations, and says what is wrong in one line.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_PASSOPTIONCHECK_H
#define OVERLAPDIALECT_SUPPORT_PASSOPTIONCHECK_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace overlap {

/// What an option's value may be; each kind is one C++ type of the
/// declarations (overlap-tblgen refuses any other).
enum class PassOptionKind { Enum, Bool, Integer, Unsigned, Number, String };

/// One option of a pass, as declared in a Passes.td.
struct PassOptionInfo {
  std::string name;
  PassOptionKind kind;
  /// A ListOption: its value is a comma-separated list of elements.
  bool isList;
  /// The names of an Enum's values, in declaration order.
  std::vector<std::string> values;
};

/// A pass (its argument, as in a pipeline) and its options.
struct PassOptionTableEntry {
  std::string pass;
  std::vector<PassOptionInfo> options;
};

/// The passes declared in overlap's Passes.td files and their options.
llvm::ArrayRef<PassOptionTableEntry> getPassOptionTable();

/// Checks the options of `pass` (`key=value ...`, as in a pipeline's
/// braces) against its entry; returns the first error, or "".
std::string checkPassOptions(const PassOptionTableEntry &pass,
                             llvm::StringRef options);

/// Checks the options given to the passes of `table` on a command line, by
/// `--<pass>=<options>` or in a textual pipeline (`--pass-pipeline`,
/// `-p`); returns the first error, or "". Other passes are left to MLIR.
std::string checkPassOptionArguments(llvm::ArrayRef<PassOptionTableEntry> table,
                                     int argc, const char *const *argv);

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_PASSOPTIONCHECK_H
