//===- UpstreamCrashes.cpp - Inputs that crash MLIR 22 itself -------------===//

#include "UpstreamCrashes.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

/// Whether `rest` starts with `[` integers separated by commas `]`, which
/// is all TransposeOp::parse copes with.
static bool isClosedIntegerList(StringRef rest) {
  rest = rest.ltrim();
  if (!rest.consume_front("["))
    return false;
  while (true) {
    rest = rest.ltrim();
    size_t digits = rest.find_if_not(isDigit);
    if (digits == 0 || digits == StringRef::npos)
      return false;
    rest = rest.drop_front(digits).ltrim();
    if (rest.consume_front("]"))
      return true;
    if (!rest.consume_front(","))
      return false;
  }
}

/// Whether a `tensor.from_elements` statement (up to the end of its line)
/// names a type whose element count might reach 2^32: any dimension of
/// ten digits or more, or a product we would have to compute to know.
static bool mayBeHugeFromElements(StringRef line) {
  size_t colon = line.rfind(':');
  if (colon == StringRef::npos)
    return true;
  StringRef type = line.drop_front(colon + 1);
  uint64_t elements = 1;
  while (!type.empty()) {
    size_t start = type.find_if(isDigit);
    if (start == StringRef::npos)
      break;
    type = type.drop_front(start);
    size_t digits = type.find_if_not(isDigit);
    StringRef number = type.take_front(digits);
    type = type.drop_front(number.size());
    uint64_t dim = 0;
    if (number.size() >= 10 || number.getAsInteger(10, dim))
      return true;
    elements *= dim == 0 ? 1 : dim;
    if (elements >= (uint64_t(1) << 32))
      return true;
  }
  return false;
}

bool overlap::fuzz::hitsUpstreamCrash(StringRef text) {
  for (size_t at = text.find("linalg.transpose"); at != StringRef::npos;
       at = text.find("linalg.transpose", at + 1)) {
    StringRef rest = text.drop_front(at);
    size_t permutation = rest.find("permutation");
    if (permutation == StringRef::npos)
      return true;
    rest = rest.drop_front(permutation + strlen("permutation")).ltrim();
    if (!rest.consume_front("=") || !isClosedIntegerList(rest))
      return true;
  }
  for (size_t at = text.find("from_elements"); at != StringRef::npos;
       at = text.find("from_elements", at + 1)) {
    StringRef line = text.drop_front(at).split('\n').first;
    if (mayBeHugeFromElements(line))
      return true;
  }
  return false;
}
