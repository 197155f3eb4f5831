//===- CInterface.h - The C ABI compiled programs call ----------*- C++ -*-===//
//
// `ovl-lower-to-runtime` lowers each collective to a call of one of these
// functions (MLIR's `llvm.emit_c_interface` convention: memrefs arrive as
// pointers to descriptors). They decode the descriptors and the op's
// constant config array, and forward to `ovlrt::currentDevice()`, so the same
// entry points serve every transport.
//
//   void    _mlir_ciface_ovlrt_<op>_<type>(UnrankedMemRef *in,
//                                         UnrankedMemRef *out,
//                                         MemRef1D<int64_t> *config,
//                                         MemRef1D<int8_t> *where)
//           <op>   = all_gather | reduce_scatter | all_reduce | permute
//   int64_t _mlir_ciface_ovlrt_<op>_start_<type>(same arguments)
//           returns the request that the matching done completes
//   void    _mlir_ciface_ovlrt_permute_done(int64_t request,
//                                          MemRef1D<int8_t> *where)
//   void    _mlir_ciface_ovlrt_collective_done(int64_t request,
//                                             MemRef1D<int8_t> *where)
//           completes an all_gather, reduce_scatter or all_reduce start
//           (or a permute start)
//   int64_t _mlir_ciface_ovlrt_partition_id(MemRef1D<int64_t> *config)
//
//   <type> = f32 | f64 | f16 | bf16 | i8 | i16 | i32 | i64
//   config = [grid rank, grid shape..., #axes, axes..., dim, reduction,
//             #pairs, (source, target)...]
//   where  = the op's source location, NUL-terminated
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_CINTERFACE_H
#define OVLRT_CINTERFACE_H

#include <vector>

namespace ovlrt {

/// One C entry point: its unmangled name and address.
struct CSymbol {
  const char *name;
  void *address;
};

/// Every entry point above, for registering with a JIT.
const std::vector<CSymbol> &getCInterfaceSymbols();

} // namespace ovlrt

#endif // OVLRT_CINTERFACE_H
