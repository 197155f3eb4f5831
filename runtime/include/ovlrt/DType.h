//===- DType.h - Element types and reductions -------------------*- C++ -*-===//
//
// The element types the runtime moves and reduces, the conversions between
// the 16-bit float formats and float, and the elementwise reduction kernel
// every transport uses. The enum values are part of the ABI: the compiler
// passes element types and reductions to the runtime as integers.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_DTYPE_H
#define OVLRT_DTYPE_H

#include <cstdint>

namespace ovlrt {

enum class DType : int32_t {
  F32 = 0,
  F64 = 1,
  F16 = 2,
  BF16 = 3,
  I8 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
};

enum class Reduction : int32_t { Sum = 0, Prod = 1, Max = 2, Min = 3 };

/// True if `value` is one of the DType enumerators (values arriving from
/// compiled code are checked before use).
bool isValidDType(int64_t value);
bool isValidReduction(int64_t value);

/// Bytes per element.
int64_t dtypeSize(DType type);
/// The MLIR spelling: "f32", "bf16", "i8", ...
const char *dtypeName(DType type);
/// "sum", "prod", "max", "min".
const char *reductionName(Reduction reduction);

/// IEEE binary16 and bfloat16 bit patterns to float: exact.
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);
/// float to IEEE binary16 / bfloat16, rounding to nearest, ties to even;
/// NaNs stay (quiet) NaNs, overflow becomes infinity.
uint16_t floatToHalf(float value);
uint16_t floatToBFloat16(float value);

/// out[e] = in[0][e] op in[1][e] op ... op in[n-1][e] for every element e,
/// combined strictly in that order so that the result does not depend on
/// which input arrived first. f16 and bf16 are combined in float and rounded
/// once at the end; integer sums and products wrap around. Max and min
/// propagate NaN. Buffers are contiguous; `out` may be one of the inputs.
void reduceBuffers(DType type, Reduction reduction, const void *const *inputs,
                   int64_t numInputs, void *out, int64_t numElements);

} // namespace ovlrt

#endif // OVLRT_DTYPE_H
