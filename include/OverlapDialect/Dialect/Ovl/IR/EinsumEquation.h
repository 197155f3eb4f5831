//===- EinsumEquation.h - Parsing and classifying einsums -------*- C++ -*-===//
//
// An einsum equation such as "bsf,bfh->bsh", parsed into one term per input
// and an output term, with the classification of every index that the
// decomposition passes need: batch, contracting, free or reduced. It knows
// nothing of MLIR's IR, so it is tested on its own.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_IR_EINSUMEQUATION_H
#define OVERLAPDIALECT_DIALECT_OVL_IR_EINSUMEQUATION_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::ovl {

/// The role of one index letter of a two-input einsum.
enum class EinsumIndexKind {
  Batch,        ///< In both inputs and the output.
  Contracting,  ///< In both inputs, not in the output.
  LhsFree,      ///< In the first input and the output only.
  RhsFree,      ///< In the second input and the output only.
  LhsReduction, ///< In the first input only: summed before the product.
  RhsReduction, ///< In the second input only: summed before the product.
};

/// Lower-case name of a kind, as used in diagnostics and remarks.
llvm::StringRef stringifyEinsumIndexKind(EinsumIndexKind kind);

/// A parsed einsum equation: `term(,term)*->term` where a term is a string of
/// distinct letters. Implicit output (no `->`), ellipses and repeated letters
/// inside one term (diagonals) are rejected with a message saying so.
class EinsumEquation {
public:
  /// Parses `equation`; the error message names the offending character and
  /// its 0-based position.
  static llvm::Expected<EinsumEquation> parse(llvm::StringRef equation);

  unsigned getNumInputs() const { return inputs.size(); }
  llvm::StringRef getInput(unsigned i) const { return inputs[i]; }
  llvm::ArrayRef<std::string> getInputs() const { return inputs; }
  llvm::StringRef getOutput() const { return output; }

  /// Every letter of the equation once, in order of first appearance.
  llvm::StringRef getIndices() const { return indices; }

  /// Position of `index` in input `input` (or the output), if it occurs.
  std::optional<unsigned> findInInput(unsigned input, char index) const;
  std::optional<unsigned> findInOutput(char index) const;

  /// Classification of `index` in a two-input einsum.
  EinsumIndexKind classify(char index) const;
  /// Classification of dimension `dim` of input `input` (0 or 1).
  EinsumIndexKind classifyInputDim(unsigned input, unsigned dim) const {
    return classify(inputs[input][dim]);
  }

  /// The canonical spelling, e.g. "bf,fh->bh".
  std::string str() const;

private:
  llvm::SmallVector<std::string, 2> inputs;
  std::string output;
  std::string indices;
};

} // namespace mlir::ovl

#endif // OVERLAPDIALECT_DIALECT_OVL_IR_EINSUMEQUATION_H
