//===- PassOptionCheck.cpp - Checks the options of overlap's passes -------===//

#include "OverlapDialect/Support/PassOptionCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <optional>

using namespace llvm;
using namespace overlap;

ArrayRef<PassOptionTableEntry> overlap::getPassOptionTable() {
  static const std::vector<PassOptionTableEntry> table = {
#include "OverlapDialect/Conversion/PassOptionTable.inc"
#include "OverlapDialect/Dialect/Ovl/Transforms/PassOptionTable.inc"
#include "OverlapDialect/Pipelines/PassOptionTable.inc"
  };
  return table;
}

/// The length of the start of `text` up to the first character of `stops`
/// outside quotes and brackets, or up to a closing bracket that no opening
/// one in it matches: a value may be quoted or a braced pipeline with
/// spaces and commas.
static size_t tokenLength(StringRef text, StringRef stops) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (StringRef("{[(").contains(c)) {
      ++depth;
    } else if (StringRef("}])").contains(c)) {
      if (depth-- == 0)
        return i;
    } else if (depth == 0 && stops.contains(c)) {
      return i;
    }
  }
  return text.size();
}

/// `value` without the quotes or braces MLIR takes off around a value.
static StringRef unquote(StringRef value) {
  if (value.size() >= 2 && ((value.front() == value.back() &&
                             (value.front() == '"' || value.front() == '\'')) ||
                            (value.front() == '{' && value.back() == '}')))
    return value.drop_front().drop_back();
  return value;
}

static const PassOptionInfo *findOption(const PassOptionTableEntry &pass,
                                        StringRef name) {
  auto found = find_if(pass.options, [&](const PassOptionInfo &option) {
    return option.name == name;
  });
  return found == pass.options.end() ? nullptr : &*found;
}

/// Whether cl's parser of the option's type accepts `text`.
static bool isValidValue(const PassOptionInfo &option, StringRef text) {
  switch (option.kind) {
  case PassOptionKind::Enum:
    return is_contained(option.values, text);
  case PassOptionKind::Bool:
    return is_contained(
        {"true", "TRUE", "True", "1", "false", "FALSE", "False", "0"}, text);
  case PassOptionKind::Integer: {
    int64_t value;
    return !text.getAsInteger(0, value);
  }
  case PassOptionKind::Unsigned: {
    unsigned value;
    return !text.getAsInteger(0, value);
  }
  case PassOptionKind::Number: {
    // to_float, as cl's parser, reads an empty text as 0: a value the user
    // did not write.
    double value;
    return !text.empty() && to_float(text, value);
  }
  case PassOptionKind::String:
    return true;
  }
  llvm_unreachable("unknown PassOptionKind");
}

/// What the option's values may be, for an error.
static std::string validValues(const PassOptionInfo &option) {
  switch (option.kind) {
  case PassOptionKind::Enum:
    return join(option.values, ", ");
  case PassOptionKind::Bool:
    return "true, false";
  case PassOptionKind::Integer:
    return "an integer";
  case PassOptionKind::Unsigned:
    return "an unsigned integer";
  case PassOptionKind::Number:
    return "a number";
  case PassOptionKind::String:
    return "a string";
  }
  llvm_unreachable("unknown PassOptionKind");
}

static std::string unknownOption(const PassOptionTableEntry &pass,
                                 StringRef name) {
  std::string error =
      "pass '" + pass.pass + "' has no option '" + name.str() + "'";
  if (pass.options.empty())
    return error + " (it takes none)";
  const PassOptionInfo *nearest = &pass.options.front();
  for (const PassOptionInfo &option : pass.options)
    if (name.edit_distance(option.name) < name.edit_distance(nearest->name))
      nearest = &option;
  SmallVector<StringRef> names;
  for (const PassOptionInfo &option : pass.options)
    names.push_back(option.name);
  return error + "; did you mean '" + nearest->name +
         "'? (options: " + join(names, ", ") + ")";
}

/// Checks one `name[=value]` of `pass`'s options.
static std::string checkOption(const PassOptionTableEntry &pass, StringRef name,
                               std::optional<StringRef> value) {
  const PassOptionInfo *option = findOption(pass, name);
  if (!option)
    return unknownOption(pass, name);
  std::string prefix = "pass '" + pass.pass + "': option '" + option->name;
  // A flag alone sets a bool; every other option needs its value.
  if (!value)
    return option->kind == PassOptionKind::Bool
               ? ""
               : prefix + "' needs a value (valid: " + validValues(*option) +
                     ")";
  SmallVector<StringRef> elements;
  if (option->isList) {
    for (StringRef rest = *value; !rest.empty();) {
      size_t length = tokenLength(rest, ",");
      elements.push_back(unquote(rest.take_front(length)));
      rest = rest.drop_front(std::min(length + 1, rest.size()));
    }
  } else {
    elements.push_back(*value);
  }
  for (StringRef element : elements)
    if (!isValidValue(*option, element))
      return prefix + "' has no value '" + element.str() +
             "' (valid: " + validValues(*option) + ")";
  return "";
}

std::string overlap::checkPassOptions(const PassOptionTableEntry &pass,
                                      StringRef options) {
  while (!(options = options.ltrim()).empty()) {
    StringRef name =
        options.take_until([](char c) { return c == '=' || isSpace(c); });
    options = options.drop_front(name.size());
    std::optional<StringRef> value;
    if (options.consume_front("=")) {
      size_t length = tokenLength(options, " \t\n");
      value = unquote(options.take_front(length));
      // An unmatched closing bracket is a value of its own, not a stop; an
      // empty value at the end leaves nothing to drop.
      options = options.drop_front(
          std::min(std::max<size_t>(length, 1), options.size()));
    }
    std::string error = checkOption(pass, name, value);
    if (!error.empty())
      return error;
  }
  return "";
}

static const PassOptionTableEntry *
findPass(ArrayRef<PassOptionTableEntry> table, StringRef name) {
  auto found = find_if(table, [&](const PassOptionTableEntry &entry) {
    return entry.pass == name;
  });
  return found == table.end() ? nullptr : &*found;
}

/// Checks the options in braces of each pass of `table` in a textual
/// pipeline; the pipeline's own syntax is left to MLIR.
static std::string checkPipeline(ArrayRef<PassOptionTableEntry> table,
                                 StringRef pipeline) {
  for (size_t open = pipeline.find('{'); open != StringRef::npos;
       open = pipeline.find('{', open + 1)) {
    StringRef before = pipeline.take_front(open).rtrim();
    size_t separator = before.find_last_of(" \t\n,()");
    StringRef name = separator == StringRef::npos
                         ? before
                         : before.drop_front(separator + 1);
    size_t length = tokenLength(pipeline.drop_front(open + 1), "");
    StringRef options = pipeline.substr(open + 1, length);
    if (const PassOptionTableEntry *pass = findPass(table, name)) {
      std::string error = checkPassOptions(*pass, options);
      if (!error.empty())
        return error;
    }
    // Braces within the options (a nested pipeline) are not passes' own.
    open += length;
  }
  return "";
}

std::string
overlap::checkPassOptionArguments(ArrayRef<PassOptionTableEntry> table,
                                  int argc, const char *const *argv) {
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      return "";
    if (arg.size() < 2 || !arg.starts_with("-"))
      continue;
    StringRef name = arg.drop_front(arg.starts_with("--") ? 2 : 1);
    auto [flag, value] = name.split('=');
    bool hasValue = name.contains('=');
    std::string error;
    if (flag == "pass-pipeline" || flag == "p") {
      if (!hasValue && i + 1 < argc)
        value = argv[++i];
      error = checkPipeline(table, value);
    } else if (const PassOptionTableEntry *pass = findPass(table, flag)) {
      if (hasValue)
        error = checkPassOptions(*pass, value);
    }
    if (!error.empty())
      return error;
  }
  return "";
}
