//===- Program.cpp - ovl programs JIT-compiled for the CPU runtime --------===//
//
// The entry function is wrapped in `__ovl_entry`, which takes every input
// and output as an identity-layout memref owned by the host: inputs enter as
// `bufferization.to_tensor` and results are materialized in the output
// buffers, so no allocation crosses the host boundary. The wrapper has a C
// interface, called through a packed entry point with one memref descriptor
// per tensor.
//
// Code generation follows bench/matmul (README.md there): the host CPU and
// its features, -O3 for both the LLVM IR optimizer and the code generator,
// and a heap that keeps freed memory (see keepFreedMemory).
//
// The compile makes an object file, as MLIR's ExecutionEngine does inside,
// but does not hand it straight to a JIT: the object is what the compile
// cache (CompileCache.h) keeps, so that a hit skips the lowering pipeline
// and code generation, and a fresh object and a cached one are linked the
// same way (loadObject).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Runner/Program.h"

#include "OverlapDialect/Analysis/CollectiveConsistency.h"
#include "OverlapDialect/Analysis/EntryFunction.h"
#include "OverlapDialect/Analysis/PeakMemory.h"

#include "OverlapDialect/Conversion/Passes.h"
#include "OverlapDialect/Pipelines/Pipelines.h"
#include "OverlapDialect/Support/TargetCpu.h"
#include "ovlrt/CInterface.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace mlir;
using namespace overlap;

static constexpr llvm::StringLiteral kWrapperName = "__ovl_entry";
static constexpr llvm::StringLiteral kPackedEntryName = "__ovl_entry_packed";

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

/// Adds `kPackedEntryName(ptr descriptors)`, which calls the wrapper's C
/// interface with the memref descriptor pointers of the array it is given:
/// one function type for every program.
static void addPackedEntry(llvm::Module &module) {
  llvm::Function *wrapper =
      module.getFunction(("_mlir_ciface_" + kWrapperName).str());
  assert(wrapper && "the wrapper has a C interface");
  llvm::IRBuilder<> builder(module.getContext());
  auto *type = llvm::FunctionType::get(builder.getVoidTy(), builder.getPtrTy(),
                                       /*isVarArg=*/false);
  auto *packed = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, kPackedEntryName, module);
  builder.SetInsertPoint(
      llvm::BasicBlock::Create(module.getContext(), "entry", packed));
  SmallVector<llvm::Value *> args;
  for (auto [i, arg] : llvm::enumerate(wrapper->args())) {
    llvm::Value *slot =
        builder.CreateConstGEP1_64(builder.getPtrTy(), packed->getArg(0), i);
    args.push_back(builder.CreateLoad(arg.getType(), slot));
  }
  builder.CreateCall(wrapper, args);
  builder.CreateRetVoid();
}

/// Lowers `module` with `pm`, translates it to LLVM IR, optimizes it and
/// compiles it for `machine`, as MLIR's ExecutionEngine would (with the
/// optimizing transformer of `optLevel`), into an object file.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
compileObject(ModuleOp module, PassManager &pm, llvm::TargetMachine &machine,
              unsigned optLevel) {
  if (failed(pm.run(module)))
    return makeError("lowering to the LLVM dialect failed");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return makeError("could not translate the lowered program to LLVM IR");
  // The JIT runs no initializers (loadObject); none are ever lowered.
  if (llvmModule->getNamedGlobal("llvm.global_ctors") ||
      llvmModule->getNamedGlobal("llvm.global_dtors"))
    return makeError("the lowered program has global constructors or "
                     "destructors, which the runner does not run");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  addPackedEntry(*llvmModule);
  if (llvm::Error error = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                                    &machine)(llvmModule.get()))
    return std::move(error);
  return llvm::orc::SimpleCompiler(machine)(*llvmModule);
}

/// The runtime's C entry points, and the helpers the lowered code calls.
static llvm::orc::SymbolMap
runtimeSymbols(llvm::orc::MangleAndInterner &interner) {
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
}

/// A JIT holding `object`, its references resolved to the runtime's
/// symbols and this process's libraries, as MLIR's ExecutionEngine links
/// (RuntimeDyld, the GDB and perf listeners); freshly compiled and cached
/// objects alike go through it.
static llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>
loadObject(std::unique_ptr<llvm::MemoryBuffer> object,
           llvm::orc::JITTargetMachineBuilder machineBuilder,
           const llvm::DataLayout &dataLayout) {
  auto createLinkingLayer = [](llvm::orc::ExecutionSession &session)
      -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
    auto layer = std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
        session, [](const llvm::MemoryBuffer &) {
          return std::make_unique<llvm::SectionMemoryManager>();
        });
    layer->registerJITEventListener(
        *llvm::JITEventListener::createGDBRegistrationListener());
    if (llvm::JITEventListener *perf =
            llvm::JITEventListener::createPerfJITEventListener())
      layer->registerJITEventListener(*perf);
    return layer;
  };
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(machineBuilder))
                 .setDataLayout(dataLayout)
                 .setObjectLinkingLayerCreator(createLinkingLayer)
                 // No initializers to run (compileObject), so no platform
                 // to compile.
                 .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                 .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &library = (*jit)->getMainJITDylib();
  llvm::orc::MangleAndInterner interner(library.getExecutionSession(),
                                        (*jit)->getDataLayout());
  if (llvm::Error error =
          library.define(llvm::orc::absoluteSymbols(runtimeSymbols(interner))))
    return std::move(error);
  if (llvm::Error error = (*jit)->addObjectFile(std::move(object)))
    return std::move(error);
  return std::move(*jit);
}

/// What the object depends on besides the module and the options: the
/// code of overlap's lowering, of the runtime whose entry points it calls,
/// of MLIR and of LLVM (a rebuild of any of them changes it).
static const std::string &identifyCompiler() {
  static const std::string identity = identifyCode(
      {reinterpret_cast<const void *>(&buildWrapper),
       reinterpret_cast<const void *>(&overlap::buildOvlToLLVMPipeline),
       reinterpret_cast<const void *>(&ovl::createOvlLowerToRuntimePass),
       reinterpret_cast<const void *>(&ovlrt::getCInterfaceSymbols),
       reinterpret_cast<const void *>(&translateModuleToLLVMIR),
       reinterpret_cast<const void *>(&llvm::sys::getProcessTriple)});
  return identity;
}

/// The cache key of `module` (with its wrapper) lowered by `pm` and
/// compiled for `cpu` at `optLevel` (docs/Runtime.md lists what counts).
static CacheKey makeCacheKey(ModuleOp module, PassManager &pm,
                             const overlap::TargetCpu &cpu, unsigned optLevel) {
  CacheKeyBuilder key;
  // Changes with the entry's format.
  key.add("format", "1");
  key.add("overlap", OVERLAP_VERSION_STRING);
  key.add("llvm", LLVM_VERSION_STRING);
  key.add("code", identifyCompiler());
  key.add("triple", llvm::sys::getProcessTriple());
  key.add("cpu", cpu.name);
  key.add("features", llvm::join(cpu.featureFlags(), ","));
  key.add("opt-level", std::to_string(optLevel));
  // Every pass with its options; the contraction tiles depend on the
  // host's caches besides the options.
  key.addPrinted("pipeline",
                 [&](raw_ostream &os) { pm.printAsTextualPipeline(os); });
  overlap::ContractionTiles tiles =
      overlap::contractionTilesFor(cpu, overlap::hostCacheSizes());
  key.add("tiles", llvm::formatv("{0} {1} {2} {3} {4}", tiles.mr, tiles.nr,
                                 tiles.mc, tiles.nc, tiles.kc)
                       .str());
  // Generic form, with locations: the runtime's error messages name the
  // source positions of the collectives.
  key.addPrinted("module", [&](raw_ostream &os) {
    module->print(os, OpPrintingFlags()
                          .printGenericOpForm()
                          .enableDebugInfo(/*enable=*/true,
                                           /*prettyForm=*/false)
                          .assumeVerified());
  });
  return key.finish();
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
  module.walk([&](memref::GlobalOp global) {
    if (!global.getConstant() && program->mutableGlobal.empty())
      program->mutableGlobal = global.getSymName().str();
  });
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

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // What detectHost does, with the target's CPU and features instead of
  // the host's.
  llvm::orc::JITTargetMachineBuilder machineBuilder{
      llvm::Triple(llvm::sys::getProcessTriple())};
  machineBuilder.setCPU(cpu->name);
  machineBuilder.addFeatures(cpu->featureFlags());
  std::optional<llvm::CodeGenOptLevel> codeGenLevel =
      llvm::CodeGenOpt::getLevel(options.optLevel);
  if (!codeGenLevel)
    return makeError("optimization level " + Twine(options.optLevel) +
                     " is not in 0-3");
  machineBuilder.setCodeGenOptLevel(*codeGenLevel);
  auto targetMachine = machineBuilder.createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();

  buildWrapper(module, entry);
  PassManager pm(module.getContext());
  OvlToLLVMPipelineOptions lowering;
  lowering.targetCpu = options.targetCpu;
  buildOvlToLLVMPipeline(pm, lowering);

  std::optional<CompileCache> cache;
  CacheKey key;
  std::unique_ptr<llvm::MemoryBuffer> object;
  if (!options.cache.dir.empty()) {
    cache.emplace(options.cache);
    key = makeCacheKey(module, pm, *cpu, options.optLevel);
    object = cache->load(key);
  }
  if (object) {
    program->cacheUse = CacheUse::Hit;
  } else {
    auto compiled =
        compileObject(module, pm, **targetMachine, options.optLevel);
    if (!compiled)
      return compiled.takeError();
    object = std::move(*compiled);
    if (cache) {
      program->cacheUse = CacheUse::Miss;
      cache->store(key, object->getBuffer());
    }
  }
  if (cache)
    program->cacheWarnings = cache->getWarnings();

  static std::once_flag heapConfigured;
  std::call_once(heapConfigured, keepFreedMemory);

  auto jit = loadObject(std::move(object), std::move(machineBuilder),
                        (*targetMachine)->createDataLayout());
  if (!jit)
    return jit.takeError();
  program->jit = std::move(*jit);
  auto entryPoint = program->jit->lookup(kPackedEntryName);
  if (!entryPoint)
    return entryPoint.takeError();
  program->entry = entryPoint->toPtr<void (*)(void **)>();
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
  std::vector<void *> pointers;
  for (std::vector<int64_t> &words : descriptors)
    pointers.push_back(words.data());
  entry(pointers.data());
}
