//===- Program.cpp - ovl programs JIT-compiled for the CPU runtime --------===//
//
// The entry function is wrapped in `__ovl_entry`, which takes every input
// and output as an identity-layout memref owned by the host: inputs enter as
// `bufferization.to_tensor` and results are materialized in the output
// buffers, so no allocation crosses the host boundary. The wrapper has a C
// interface, called through the ExecutionEngine's packed entry point with
// one memref descriptor per tensor.
//
// Code generation follows bench/matmul (README.md there): the host CPU and
// its features, -O3 for both the LLVM IR optimizer and the code generator,
// and a heap that keeps freed memory (see keepFreedMemory).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Runner/Program.h"

#include "OverlapDialect/Analysis/CollectiveConsistency.h"
#include "OverlapDialect/Analysis/EntryFunction.h"
#include "OverlapDialect/Analysis/PeakMemory.h"

#include "OverlapDialect/Pipelines/Pipelines.h"
#include "OverlapDialect/Support/TargetCpu.h"
#include "ovlrt/CInterface.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace mlir;
using namespace overlap;

static constexpr llvm::StringLiteral kWrapperName = "__ovl_entry";

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The runtime element type of `type`, if it has one.
static std::optional<ovlrt::DType> toDType(Type type) {
  if (type.isF32())
    return ovlrt::DType::F32;
  if (type.isF64())
    return ovlrt::DType::F64;
  if (type.isF16())
    return ovlrt::DType::F16;
  if (type.isBF16())
    return ovlrt::DType::BF16;
  if (type.isInteger(8))
    return ovlrt::DType::I8;
  if (type.isInteger(16))
    return ovlrt::DType::I16;
  if (type.isInteger(32))
    return ovlrt::DType::I32;
  if (type.isInteger(64))
    return ovlrt::DType::I64;
  return std::nullopt;
}

static llvm::Expected<overlap::TensorType> toTensorType(Type type,
                                                        const Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<ovlrt::DType> dtype =
      tensor ? toDType(tensor.getElementType()) : std::nullopt;
  if (!tensor || !tensor.hasStaticShape() || !dtype) {
    std::string text;
    llvm::raw_string_ostream(text) << type;
    return makeError(what + " has type " + text +
                     "; the runner needs statically shaped tensors of f32, "
                     "f64, f16, bf16, i8, i16, i32 or i64");
  }
  return overlap::TensorType{*dtype, tensor.getShape().vec()};
}

/// Devices a program runs on: the size of its grids.
static llvm::Expected<int64_t> countDevices(ModuleOp module) {
  std::optional<int64_t> devices;
  for (auto grid : module.getOps<shard::GridOp>()) {
    int64_t size = 1;
    for (int64_t axis : grid.getShape()) {
      if (ShapedType::isDynamic(axis))
        return makeError("grid @" + grid.getSymName() +
                         " has a dynamic shape; the runner needs its size");
      size *= axis;
    }
    if (devices && *devices != size)
      return makeError("the module's grids have different sizes (" +
                       Twine(*devices) + " and " + Twine(size) +
                       " devices); the runner runs one set of devices");
    devices = size;
  }
  return devices.value_or(1);
}

/// Makes glibc keep freed memory for the rest of the process. The vectorized
/// contractions allocate their result and packing buffers (a few MiB) on
/// every call; memory that glibc hands back to the OS at free is page-faulted
/// in again by the next call, which then runs at a fraction of the speed.
///  - M_MMAP_THRESHOLD: blocks above it are mmap'ed and unmapped at free
///    (glibc's default starts at 128 KiB). 32 MiB is its largest value on
///    64-bit hosts.
///  - M_TRIM_THRESHOLD: free memory above it at the top of a heap is given
///    back (bench/matmul: 3.6x slower than OpenBLAS at 1000^3 without these
///    two, 1.1x with them).
///  - M_TOP_PAD: the device threads allocate from per-thread arenas, made of
///    heaps of at most 64 MiB; an emptied heap is unmapped whatever the trim
///    threshold, unless the previous heap has less than M_TOP_PAD bytes left.
///    Fragmented by the per-step input copies, the first heap fills up and a
///    1024^3 einsum mapped (and faulted in) a new heap on every step: 2x
///    slower.
static void keepFreedMemory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

/// Adds `__ovl_entry(inputs..., outputs...)` calling `entry`.
static void buildWrapper(ModuleOp module, func::FuncOp entry) {
  module.getContext()->loadDialect<bufferization::BufferizationDialect>();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Location loc = entry.getLoc();
  SmallVector<Type> argTypes;
  FunctionType entryType = entry.getFunctionType();
  auto toMemref = [](Type type) -> Type {
    auto tensor = cast<RankedTensorType>(type);
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  };
  for (Type type : entryType.getInputs())
    argTypes.push_back(toMemref(type));
  for (Type type : entryType.getResults())
    argTypes.push_back(toMemref(type));
  auto wrapper = func::FuncOp::create(builder, loc, kWrapperName,
                                      builder.getFunctionType(argTypes, {}));
  wrapper->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *body = wrapper.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  SmallVector<Value> inputs;
  unsigned numInputs = entryType.getNumInputs();
  for (auto [type, arg] :
       llvm::zip(entryType.getInputs(), body->getArguments())) {
    inputs.push_back(bufferization::ToTensorOp::create(
        builder, loc, type, arg, /*restrict=*/true, /*writable=*/true));
  }
  auto call = func::CallOp::create(builder, loc, entry, inputs);
  for (auto [result, arg] : llvm::zip(
           call.getResults(), body->getArguments().drop_front(numInputs))) {
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        builder, loc, result, arg);
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  func::ReturnOp::create(builder, loc);
}

llvm::Expected<std::unique_ptr<Program>>
Program::compile(ModuleOp module, const CompileOptions &options) {
  // A program whose devices would not communicate alike deadlocks or
  // exchanges the wrong data; refuse it before it runs.
  if (options.verifyCollectives &&
      failed(ovl::verifyCollectiveConsistency(module)))
    return makeError("the devices would not communicate alike "
                     "(ovl-verify-collectives)");
  std::unique_ptr<Program> program(new Program());
  FailureOr<FunctionOpInterface> found =
      ovl::findEntryFunction(module, options.entry);
  if (failed(found))
    return makeError("no entry function to run");
  auto entry = dyn_cast<func::FuncOp>(found->getOperation());
  if (!entry)
    return makeError("the entry @" + found->getName() + " is not a func.func");
  program->entryName = entry.getSymName().str();
  {
    // Only a budget: when the estimate fails, callers fall back on the
    // inputs and outputs, and its error would only confuse.
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    FailureOr<ovl::PeakMemory> peak = ovl::estimatePeakMemory(entry);
    program->peakBytes = succeeded(peak) ? peak->peakBytes : 0;
  }
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto converted = toTensorType(type, "argument #" + Twine(i));
    if (!converted)
      return converted.takeError();
    program->inputTypes.push_back(*converted);
  }
  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    auto converted = toTensorType(type, "result #" + Twine(i));
    if (!converted)
      return converted.takeError();
    program->outputTypes.push_back(*converted);
  }
  llvm::Expected<int64_t> devices = countDevices(module);
  if (!devices)
    return devices.takeError();
  program->numDevices = *devices;

  llvm::Expected<overlap::TargetCpu> cpu =
      overlap::lookupRunnableTargetCpu(options.targetCpu);
  if (!cpu)
    return cpu.takeError();

  buildWrapper(module, entry);
  PassManager pm(module.getContext());
  OvlToLLVMPipelineOptions lowering;
  lowering.targetCpu = options.targetCpu;
  buildOvlToLLVMPipeline(pm, lowering);
  if (failed(pm.run(module)))
    return makeError("lowering to the LLVM dialect failed");

  static std::once_flag heapConfigured;
  std::call_once(heapConfigured, keepFreedMemory);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // What detectHost does, with the target's CPU and features instead of
  // the host's.
  llvm::orc::JITTargetMachineBuilder machineBuilder{
      llvm::Triple(llvm::sys::getProcessTriple())};
  machineBuilder.setCPU(cpu->name);
  machineBuilder.addFeatures(cpu->featureFlags());
  // On the builder: ExecutionEngineOptions::jitCodeGenOptLevel does not
  // reach a TargetMachine handed to ExecutionEngine::create.
  std::optional<llvm::CodeGenOptLevel> codeGenLevel =
      llvm::CodeGenOpt::getLevel(options.optLevel);
  if (!codeGenLevel)
    return makeError("optimization level " + Twine(options.optLevel) +
                     " is not in 0-3");
  machineBuilder.setCodeGenOptLevel(*codeGenLevel);
  auto targetMachine = machineBuilder.createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();
  // `engineOptions.transformer` is a function_ref: `transformer` must outlive
  // ExecutionEngine::create, which optimizes the module before returning.
  auto transformer =
      makeOptimizingTransformer(options.optLevel,
                                /*sizeLevel=*/0, targetMachine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*targetMachine));
  if (!engine)
    return engine.takeError();
  program->engine = std::move(*engine);
  program->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (const ovlrt::CSymbol &symbol : ovlrt::getCInterfaceSymbols())
      symbols[interner(symbol.name)] = {
          llvm::orc::ExecutorAddr::fromPtr(symbol.address),
          llvm::JITSymbolFlags::Exported};
    // Copies between buffers of different layouts lower to this helper.
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  program->engine->initialize();
  auto entryPoint =
      program->engine->lookupPacked(("_mlir_ciface_" + kWrapperName).str());
  if (!entryPoint)
    return entryPoint.takeError();
  program->entry = *entryPoint;
  return std::move(program);
}

Program::~Program() = default;

/// A memref descriptor {allocated, aligned, offset, sizes[], strides[]} of a
/// dense row-major tensor, as 64-bit words.
static std::vector<int64_t> describe(HostTensor &tensor) {
  const std::vector<int64_t> &shape = tensor.type().shape;
  std::vector<int64_t> words;
  auto address = reinterpret_cast<int64_t>(tensor.data());
  words.push_back(address);
  words.push_back(address);
  words.push_back(0);
  words.insert(words.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  words.insert(words.end(), strides.begin(), strides.end());
  return words;
}

void Program::invoke(llvm::MutableArrayRef<HostTensor> inputs,
                     llvm::MutableArrayRef<HostTensor> outputs) const {
  assert(inputs.size() == inputTypes.size() &&
         outputs.size() == outputTypes.size() && "wrong number of tensors");
  std::vector<std::vector<int64_t>> descriptors;
  for (HostTensor &tensor : inputs)
    descriptors.push_back(describe(tensor));
  for (HostTensor &tensor : outputs)
    descriptors.push_back(describe(tensor));
  // The C interface takes a pointer per descriptor; packing passes a
  // pointer to each argument.
  std::vector<void *> pointers, args;
  for (std::vector<int64_t> &words : descriptors)
    pointers.push_back(words.data());
  for (void *&pointer : pointers)
    args.push_back(&pointer);
  entry(args.data());
}
