//===- CommandLine.cpp - The command line of overlap's tools --------------===//

#include "OverlapDialect/Support/CommandLine.h"
#include "OverlapDialect/Support/NumericRange.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace llvm;

const char *const overlap::kExitStatusHelp =
    "Exit status: 0 on success, 1 on a negative result (outputs that differ "
    "from the reference, a program that cannot be simulated or that a pass "
    "rejects), 2 on a usage or input error (an unknown flag, a bad value, a "
    "missing file).\n";

/// The registered option named `name`, or null.
static cl::Option *lookup(StringRef name) {
  auto &options = cl::getRegisteredOptions();
  auto found = options.find(name);
  return found == options.end() ? nullptr : found->second;
}

/// Whether a Prefix option reads `name` as its name and a value (`-O3`).
static bool isPrefixed(StringRef name) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::FormattingFlags formatting = entry.second->getFormattingFlag();
    if ((formatting == cl::Prefix || formatting == cl::AlwaysPrefix) &&
        name.size() > entry.first.size() && name.starts_with(entry.first))
      return true;
  }
  return false;
}

/// The registered flag nearest to `name`, for a suggestion.
static std::string nearestFlag(StringRef name) {
  std::string best;
  unsigned bestDistance = 0;
  for (auto &entry : cl::getRegisteredOptions()) {
    if (entry.second->getOptionHiddenFlag() == cl::ReallyHidden)
      continue;
    unsigned distance = entry.first.edit_distance(name, true, bestDistance);
    if (best.empty() || distance < bestDistance) {
      best = entry.first.str();
      bestDistance = distance;
    }
  }
  return best;
}

/// `-x` or `--name`, as cl prints flags.
static std::string spell(StringRef name) {
  return (name.size() == 1 ? "-" : "--") + name.str();
}

/// Fails, with cl's message and a suggestion, on the first flag of `argv`
/// that no registered option has as its name. cl itself reads such a flag
/// as a group of one-letter flags when it begins with one, and every
/// one-letter option groups: `--hardware` was `-h -a -r ...`, the help
/// (exit 0) in a tool without --hardware, and `--ovl-decompose-colective-
/// einsum` was `-o` with a value. Values given apart (`--entry f`) and
/// everything after `--` are not flags.
static bool checkFlagNames(int argc, const char *const *argv) {
  // cl adds its default options (`-h`) only while parsing: name one first.
  auto &options = cl::getRegisteredOptions();
  auto help = options.find("help");
  if (help != options.end() && !options.contains("h"))
    static cl::alias shortHelp("h", cl::desc("Alias for --help"),
                               cl::aliasopt(*help->second));
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      return true;
    if (arg.size() < 2 || !arg.starts_with("-"))
      continue;
    StringRef name = arg.drop_front(arg.starts_with("--") ? 2 : 1);
    auto [flag, value] = name.split('=');
    bool hasValue = name.contains('=');
    if (cl::Option *option = lookup(flag)) {
      if (!hasValue && option->getValueExpectedFlag() == cl::ValueRequired &&
          !option->isPositional())
        ++i;
      continue;
    }
    if (isPrefixed(flag))
      continue;
    errs() << sys::path::filename(argv[0])
           << ": Unknown command line argument '" << arg << "'.  Try: '"
           << argv[0] << " --help'\n";
    std::string nearest = nearestFlag(flag);
    if (!nearest.empty())
      errs() << sys::path::filename(argv[0]) << ": Did you mean '"
             << spell(nearest) << "'?\n";
    return false;
  }
  return true;
}

/// The tool's name, for the errors of checkFlagValue.
static std::string toolName = "overlap";

void overlap::parseToolCommandLine(int argc, const char *const *argv,
                                   StringRef overview) {
  toolName = sys::path::filename(argv[0]).str();
  if (!checkFlagNames(argc, argv))
    std::exit(ExitUsage);
  std::string errors;
  raw_string_ostream errorStream(errors);
  // With an error stream, cl returns on an error instead of exiting with 1.
  if (!cl::ParseCommandLineOptions(argc, argv, overview, &errorStream)) {
    errs() << errors;
    std::exit(ExitUsage);
  }
}

void overlap::checkFlagValue(StringRef flag, const NumericRange &range,
                             double value) {
  std::string error = checkNumber(flag, range, value);
  if (error.empty())
    return;
  errs() << toolName << ": error: " << error << "\n";
  std::exit(ExitUsage);
}
