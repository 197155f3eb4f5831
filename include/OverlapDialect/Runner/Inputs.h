//===- Inputs.h - Program inputs: random or from .npy files -----*- C++ -*-===//
//
// Deterministic per-device inputs from a seed, and NumPy `.npy` files for
// inputs and outputs. bf16 has no NumPy type: it is written as its raw
// 16-bit patterns ('<u2') and read from '<u2' patterns or converted from any
// float file.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_INPUTS_H
#define OVERLAPDIALECT_RUNNER_INPUTS_H

#include "OverlapDialect/Runner/HostTensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace overlap {

/// Tensors of `types` for each of `numDevices` devices, filled from `seed`:
/// floats uniform in [-1, 1), integers uniform in [-8, 8). The values depend
/// only on (seed, device, argument, element), so two programs with the same
/// signature get the same inputs.
DeviceTensors makeRandomInputs(const std::vector<TensorType> &types,
                               int64_t numDevices, uint64_t seed);

/// Reads an .npy file as a tensor of `expected` type: the shape must match;
/// float data converts to another float type and integer data to another
/// integer type only where every element is exact in the program's type
/// (an error names the first that is not); bf16 is read from raw '<u2'
/// bit patterns.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path,
                                   const TensorType &expected);

/// Writes `tensor` as an .npy file.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_INPUTS_H
