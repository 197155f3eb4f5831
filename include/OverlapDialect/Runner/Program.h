//===- Program.h - ovl programs JIT-compiled for the CPU runtime -*- C++
//-*-===//
//
// Takes an ovl module on tensors through the `ovl-to-llvm` pipeline and
// LLVM's code generator to an object file (or takes the object from the
// compile cache), links it into an ORC JIT, and calls its entry function
// for one device with host tensors. Devices are the callers' threads (or
// processes): the collectives inside go through `ovlrt::currentDevice()`.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_PROGRAM_H
#define OVERLAPDIALECT_RUNNER_PROGRAM_H

#include "OverlapDialect/Runner/CompileCache.h"
#include "OverlapDialect/Runner/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

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
  /// The compile cache; none when its folder is empty (the default).
  CompileCacheOptions cache;
};

/// An ovl program compiled for the CPU runtime.
class Program {
public:
  /// Checks `module` with verifyCollectiveConsistency (the devices must
  /// communicate alike; unless options.verifyCollectives is false), adds
  /// the entry's wrapper, then takes the object from the cache or lowers
  /// the module in place, compiles it and stores the object in the cache,
  /// and links the object into a JIT. The entry function must
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
  /// A `memref.global` the program may write (one not `constant`), or
  /// empty: one copy of it serves every device that runs in the process.
  const std::string &getMutableGlobal() const { return mutableGlobal; }
  /// Whether the object came from the compile cache.
  CacheUse getCacheUse() const { return cacheUse; }
  /// What went wrong with the compile cache (which never fails a compile).
  const std::vector<std::string> &getCacheWarnings() const {
    return cacheWarnings;
  }

  /// Runs the entry function once on the calling thread's device. The
  /// program may overwrite its inputs in place (One-Shot Bufferize treats
  /// function arguments as writable). `outputs` must have the output types.
  void invoke(llvm::MutableArrayRef<HostTensor> inputs,
              llvm::MutableArrayRef<HostTensor> outputs) const;

private:
  Program() = default;

  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// Takes the address of each input's and output's memref descriptor.
  void (*entry)(void **) = nullptr;
  std::string entryName;
  int64_t numDevices = 1;
  int64_t peakBytes = 0;
  std::string mutableGlobal;
  CacheUse cacheUse = CacheUse::Off;
  std::vector<std::string> cacheWarnings;
  std::vector<TensorType> inputTypes, outputTypes;
};

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_PROGRAM_H
