//===- CInterface.cpp - The C ABI compiled programs call ------------------===//
//
// Decodes MLIR memref descriptors and config arrays into runtime calls on
// the current device. Malformed configs are reported like any other misuse.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/CInterface.h"

#include "ovlrt/Runtime.h"

#include <cstdint>

using namespace ovlrt;

namespace {

/// MLIR's descriptor of a rank-1 memref.
template <typename T> struct MemRef1D {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;

  T operator[](int64_t i) const { return aligned[offset + i * stride]; }
};

/// MLIR's unranked memref: a rank and a pointer to the ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// A view of an unranked memref's elements. The sizes and strides point
/// into the caller's descriptor, which outlives the call.
TensorView toView(const UnrankedMemRef *memref, DType dtype) {
  auto *words = static_cast<int64_t *>(memref->descriptor);
  TensorView view;
  view.dtype = dtype;
  view.rank = memref->rank;
  view.data = reinterpret_cast<char *>(words[1]) + words[2] * dtypeSize(dtype);
  view.sizes = words + 3;
  view.strides = words + 3 + memref->rank;
  return view;
}

/// The decoded config array.
struct Config {
  Group group;
  int64_t dim = -1;
  int64_t reduction = 0;
  PermutePairs pairs;
};

[[noreturn]] void reportError(const OpInfo &op, const std::string &message) {
  fatal(currentDevice().id(), op, message);
}

Config decode(const MemRef1D<int64_t> *config, const OpInfo &op) {
  Config decoded;
  int64_t at = 0, size = config->size;
  auto next = [&]() -> int64_t {
    if (at >= size)
      reportError(op, "malformed config array from the compiler (" +
                          std::to_string(size) + " entries)");
    return (*config)[at++];
  };
  int64_t rank = next();
  for (int64_t i = 0; i < rank; ++i)
    decoded.group.gridShape.push_back(next());
  int64_t numAxes = next();
  for (int64_t i = 0; i < numAxes; ++i)
    decoded.group.axes.push_back(next());
  decoded.dim = next();
  decoded.reduction = next();
  decoded.pairs.numPairs = next();
  if (config->stride != 1 || at + 2 * decoded.pairs.numPairs != size)
    reportError(op, "malformed config array from the compiler");
  decoded.pairs.flat = config->aligned + config->offset + at;
  return decoded;
}

const char *where(const MemRef1D<int8_t> *location) {
  return reinterpret_cast<const char *>(location->aligned + location->offset);
}

Reduction toReduction(int64_t value, const OpInfo &op) {
  if (!isValidReduction(value))
    reportError(op, "unknown reduction " + std::to_string(value));
  return static_cast<Reduction>(value);
}

template <DType type>
void allGather(UnrankedMemRef *in, UnrankedMemRef *out,
               MemRef1D<int64_t> *config, MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.all_gather", where(location)};
  Config c = decode(config, op);
  currentDevice().allGather(toView(in, type), toView(out, type), c.group, c.dim,
                            op);
}

template <DType type>
void reduceScatter(UnrankedMemRef *in, UnrankedMemRef *out,
                   MemRef1D<int64_t> *config, MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.reduce_scatter", where(location)};
  Config c = decode(config, op);
  currentDevice().reduceScatter(toView(in, type), toView(out, type), c.group,
                                c.dim, toReduction(c.reduction, op), op);
}

template <DType type>
void allReduce(UnrankedMemRef *in, UnrankedMemRef *out,
               MemRef1D<int64_t> *config, MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.all_reduce", where(location)};
  Config c = decode(config, op);
  currentDevice().allReduce(toView(in, type), toView(out, type), c.group,
                            toReduction(c.reduction, op), op);
}

template <DType type>
void permute(UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,
             MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.collective_permute", where(location)};
  Config c = decode(config, op);
  currentDevice().permute(toView(in, type), toView(out, type), c.group, c.pairs,
                          op);
}

template <DType type>
int64_t permuteStart(UnrankedMemRef *in, UnrankedMemRef *out,
                     MemRef1D<int64_t> *config, MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.collective_permute_start", where(location)};
  Config c = decode(config, op);
  return currentDevice()
      .permuteStart(toView(in, type), toView(out, type), c.group, c.pairs, op)
      .id;
}

template <DType type>
int64_t allGatherStart(UnrankedMemRef *in, UnrankedMemRef *out,
                       MemRef1D<int64_t> *config, MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.all_gather_start", where(location)};
  Config c = decode(config, op);
  return currentDevice()
      .allGatherStart(toView(in, type), toView(out, type), c.group, c.dim, op)
      .id;
}

template <DType type>
int64_t reduceScatterStart(UnrankedMemRef *in, UnrankedMemRef *out,
                           MemRef1D<int64_t> *config,
                           MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.reduce_scatter_start", where(location)};
  Config c = decode(config, op);
  return currentDevice()
      .reduceScatterStart(toView(in, type), toView(out, type), c.group, c.dim,
                          toReduction(c.reduction, op), op)
      .id;
}

template <DType type>
int64_t allReduceStart(UnrankedMemRef *in, UnrankedMemRef *out,
                       MemRef1D<int64_t> *config, MemRef1D<int8_t> *location) {
  OpInfo op{"ovl.all_reduce_start", where(location)};
  Config c = decode(config, op);
  return currentDevice()
      .allReduceStart(toView(in, type), toView(out, type), c.group,
                      toReduction(c.reduction, op), op)
      .id;
}

} // namespace

extern "C" {

void _mlir_ciface_ovlrt_collective_done(int64_t request,
                                        MemRef1D<int8_t> *location) {
  // No op name: the device names the done after the request's start.
  currentDevice().collectiveDone(Request{request},
                                 OpInfo{nullptr, where(location)});
}

void _mlir_ciface_ovlrt_permute_done(int64_t request,
                                     MemRef1D<int8_t> *location) {
  currentDevice().permuteDone(
      Request{request}, OpInfo{"ovl.collective_permute_done", where(location)});
}

int64_t _mlir_ciface_ovlrt_partition_id(MemRef1D<int64_t> *config) {
  OpInfo op{"ovl.partition_id", nullptr};
  return currentDevice().partitionId(decode(config, op).group, op);
}

#define OVLRT_DEFINE_TYPE(suffix, type)                                        \
  void _mlir_ciface_ovlrt_all_gather_##suffix(                                 \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    allGather<type>(in, out, config, location);                                \
  }                                                                            \
  void _mlir_ciface_ovlrt_reduce_scatter_##suffix(                             \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    reduceScatter<type>(in, out, config, location);                            \
  }                                                                            \
  void _mlir_ciface_ovlrt_all_reduce_##suffix(                                 \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    allReduce<type>(in, out, config, location);                                \
  }                                                                            \
  void _mlir_ciface_ovlrt_permute_##suffix(                                    \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    permute<type>(in, out, config, location);                                  \
  }                                                                            \
  int64_t _mlir_ciface_ovlrt_permute_start_##suffix(                           \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    return permuteStart<type>(in, out, config, location);                      \
  }                                                                            \
  int64_t _mlir_ciface_ovlrt_all_gather_start_##suffix(                        \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    return allGatherStart<type>(in, out, config, location);                    \
  }                                                                            \
  int64_t _mlir_ciface_ovlrt_reduce_scatter_start_##suffix(                    \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    return reduceScatterStart<type>(in, out, config, location);                \
  }                                                                            \
  int64_t _mlir_ciface_ovlrt_all_reduce_start_##suffix(                        \
      UnrankedMemRef *in, UnrankedMemRef *out, MemRef1D<int64_t> *config,      \
      MemRef1D<int8_t> *location) {                                            \
    return allReduceStart<type>(in, out, config, location);                    \
  }

OVLRT_DEFINE_TYPE(f32, DType::F32)
OVLRT_DEFINE_TYPE(f64, DType::F64)
OVLRT_DEFINE_TYPE(f16, DType::F16)
OVLRT_DEFINE_TYPE(bf16, DType::BF16)
OVLRT_DEFINE_TYPE(i8, DType::I8)
OVLRT_DEFINE_TYPE(i16, DType::I16)
OVLRT_DEFINE_TYPE(i32, DType::I32)
OVLRT_DEFINE_TYPE(i64, DType::I64)
#undef OVLRT_DEFINE_TYPE

} // extern "C"

const std::vector<CSymbol> &ovlrt::getCInterfaceSymbols() {
#define OVLRT_SYMBOL(name) CSymbol{#name, reinterpret_cast<void *>(&name)}
#define OVLRT_TYPE_SYMBOLS(suffix)                                             \
  OVLRT_SYMBOL(_mlir_ciface_ovlrt_all_gather_##suffix),                        \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_reduce_scatter_##suffix),                \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_all_reduce_##suffix),                    \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_permute_##suffix),                       \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_permute_start_##suffix),                 \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_all_gather_start_##suffix),              \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_reduce_scatter_start_##suffix),          \
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_all_reduce_start_##suffix)
  static const std::vector<CSymbol> symbols = {
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_permute_done),
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_collective_done),
      OVLRT_SYMBOL(_mlir_ciface_ovlrt_partition_id),
      OVLRT_TYPE_SYMBOLS(f32),
      OVLRT_TYPE_SYMBOLS(f64),
      OVLRT_TYPE_SYMBOLS(f16),
      OVLRT_TYPE_SYMBOLS(bf16),
      OVLRT_TYPE_SYMBOLS(i8),
      OVLRT_TYPE_SYMBOLS(i16),
      OVLRT_TYPE_SYMBOLS(i32),
      OVLRT_TYPE_SYMBOLS(i64),
  };
#undef OVLRT_TYPE_SYMBOLS
#undef OVLRT_SYMBOL
  return symbols;
}
