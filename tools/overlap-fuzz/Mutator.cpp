//===- Mutator.cpp - Mutations that keep MLIR text parseable --------------===//
//
// libFuzzer's byte mutations break the syntax of almost every input, so
// few mutants would reach the passes. Most mutations here change one
// token for one of its kind: an integer for a boundary value (where the
// verifiers' range checks live), an ovl op or keyword for another, or move
// a whole line (reordering uses and definitions, duplicating collectives).
// The rest are libFuzzer's own, which also splice in the dictionary.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstring>
#include <random>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

using namespace llvm;

namespace {

const char *const kIntegers[] = {
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "16",
    "-1",
    "-2",
    "32767",
    "65536",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775806",
    "-9223372036854775808",
    "1048577",
};

/// Words that may stand for one another: ops, reduction kinds, types.
const char *const kWordClasses[][8] = {
    {"ovl.all_gather", "ovl.reduce_scatter", "ovl.all_reduce",
     "ovl.collective_permute", nullptr},
    {"ovl.collective_permute_start", "ovl.collective_permute_done",
     "ovl.collective_permute", nullptr},
    {"sum", "max", "min", "product", nullptr},
    {"f32", "f16", "bf16", "f64", "i32", "i64", "i8", nullptr},
    {"scf.for", "scf.if", "scf.while", nullptr},
    {"tensor.empty", "tensor.extract_slice", "tensor.insert_slice", nullptr},
};

struct Token {
  size_t begin, end;
};

/// Integer tokens (optionally signed) of `text`.
SmallVector<Token> findIntegers(StringRef text) {
  SmallVector<Token> found;
  for (size_t i = 0; i < text.size();) {
    if (!isDigit(text[i])) {
      ++i;
      continue;
    }
    size_t begin = i;
    if (begin > 0 && text[begin - 1] == '-')
      --begin;
    while (i < text.size() && isDigit(text[i]))
      ++i;
    // Part of a name (%arg0, f32, @g2) is not a number.
    bool inWord =
        begin > 0 && (isAlnum(text[begin - 1]) || text[begin - 1] == '_' ||
                      text[begin - 1] == '%' || text[begin - 1] == '@' ||
                      text[begin - 1] == '#');
    if (!inWord)
      found.push_back({begin, i});
  }
  return found;
}

/// Occurrences in `text` of any word of `wordClass`.
SmallVector<Token> findWords(StringRef text, ArrayRef<const char *> wordClass) {
  SmallVector<Token> found;
  for (const char *word : wordClass) {
    if (!word)
      break;
    for (size_t at = text.find(word); at != StringRef::npos;
         at = text.find(word, at + 1))
      found.push_back({at, at + strlen(word)});
  }
  return found;
}

std::string replace(StringRef text, Token token, StringRef with) {
  return (text.take_front(token.begin) + with + text.drop_front(token.end))
      .str();
}

/// Moves, copies or deletes one line.
std::string mutateLines(StringRef text, std::mt19937 &rng) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  if (lines.size() < 2)
    return text.str();
  size_t from = rng() % lines.size(), to = rng() % lines.size();
  SmallVector<StringRef> result(lines.begin(), lines.end());
  switch (rng() % 3) {
  case 0:
    std::swap(result[from], result[to]);
    break;
  case 1:
    result.insert(result.begin() + to, lines[from]);
    break;
  default:
    result.erase(result.begin() + from);
    break;
  }
  return join(result, "\n");
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937 rng(seed);
  StringRef text(reinterpret_cast<const char *>(data), size);
  std::string mutated;
  switch (rng() % 4) {
  case 0: {
    SmallVector<Token> integers = findIntegers(text);
    if (integers.empty())
      break;
    mutated = replace(text, integers[rng() % integers.size()],
                      kIntegers[rng() % std::size(kIntegers)]);
    break;
  }
  case 1: {
    ArrayRef<const char *> wordClass =
        kWordClasses[rng() % std::size(kWordClasses)];
    SmallVector<Token> words = findWords(text, wordClass);
    if (words.empty())
      break;
    size_t classSize = 0;
    while (classSize < wordClass.size() && wordClass[classSize])
      ++classSize;
    mutated = replace(text, words[rng() % words.size()],
                      wordClass[rng() % classSize]);
    break;
  }
  case 2:
    mutated = mutateLines(text, rng);
    break;
  default:
    break;
  }
  if (mutated.empty() || mutated.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, mutated.data(), mutated.size());
  return mutated.size();
}
