//===- Program.h - ovl programs JIT-compiled for the CPU runtime -*- C++
//-*-===//
//
// Takes an ovl module on tensors through the `ovl-to-llvm` pipeline and
// MLIR's ExecutionEngine, and calls its entry function for one device with
// host tensors. Devices are the callers' threads (or processes): the
// collectives inside go through `ovlrt::currentDevice()`.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_PROGRAM_H
#define OVERLAPDIALECT_RUNNER_PROGRAM_H

#include "OverlapDialect/Runner/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace overlap {

struct CompileOptions {
  /// The function to run; empty means the module's only public function.
  std::string entry;
  /// LLVM optimization level (0-3) of the JIT-compiled code.
  unsigned optLevel = 3;
  /// Refuse a module that verifyCollectiveConsistency finds inconsistent.
  bool verifyCollectives = true;
  /// The CPU to compile for (overlap::lookupTargetCpu): `native` or an LLVM
  /// x86-64 CPU name; refused if this host cannot run its code.
  std::string targetCpu = "native";
};

/// An ovl program compiled for the CPU runtime.
class Program {
public:
  /// Checks `module` with verifyCollectiveConsistency (the devices must
  /// communicate alike; unless options.verifyCollectives is false), lowers
  /// it in place and JIT-compiles it. The entry function must
  /// take and return statically shaped tensors of the runtime's element
  /// types; the number of devices is the size of the module's grids (which
  /// must agree), 1 without a grid. Pass failures are reported through the
  /// context's diagnostic handler and as the returned error.
  static llvm::Expected<std::unique_ptr<Program>>
  compile(mlir::ModuleOp module, const CompileOptions &options);
  ~Program();

  int64_t getNumDevices() const { return numDevices; }
  const std::vector<TensorType> &getInputTypes() const { return inputTypes; }
  const std::vector<TensorType> &getOutputTypes() const { return outputTypes; }
  const std::string &getEntryName() const { return entryName; }
  /// The bytes one device holds at the worst point of a step (arguments,
  /// results and intermediates, as ovl::estimatePeakMemory models them);
  /// 0 when that could not be estimated.
  int64_t getPeakBytesPerDevice() const { return peakBytes; }

  /// Runs the entry function once on the calling thread's device. The
  /// program may overwrite its inputs in place (One-Shot Bufferize treats
  /// function arguments as writable). `outputs` must have the output types.
  void invoke(llvm::MutableArrayRef<HostTensor> inputs,
              llvm::MutableArrayRef<HostTensor> outputs) const;

private:
  Program() = default;

  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  std::string entryName;
  int64_t numDevices = 1;
  int64_t peakBytes = 0;
  std::vector<TensorType> inputTypes, outputTypes;
};

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_PROGRAM_H
