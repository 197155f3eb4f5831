# Precompiled MLIR headers. Most of overlap's IR-side files include the same
# MLIR headers, whose parsing is most of their compile time (a pass file:
# 15 s of CPU, 7 s with these precompiled). One target builds them once;
# every target that includes MLIR's IR reuses them. The IR-free libraries
# (the scheduler, the simulator, the cost model) do not: they must not
# compile by seeing MLIR's declarations.
option(OVERLAP_PRECOMPILED_HEADERS
       "Precompile the MLIR headers overlap's IR-side files share" ON)

set(OVERLAP_PRECOMPILED_HEADER_LIST
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Bufferization/IR/Bufferization.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/Linalg/IR/Linalg.h>
  <mlir/Dialect/SCF/IR/SCF.h>
  <mlir/Dialect/Shard/IR/ShardOps.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/MLIRContext.h>
  <mlir/IR/PatternMatch.h>
  <mlir/IR/SymbolTable.h>
  <mlir/Parser/Parser.h>
  <mlir/Pass/Pass.h>
  <mlir/Pass/PassManager.h>
  <llvm/ADT/DenseMap.h>
  <llvm/ADT/STLExtras.h>
  <llvm/ADT/SmallVector.h>
  <llvm/ADT/StringExtras.h>
  <llvm/Support/Error.h>
  <llvm/Support/FormatVariadic.h>
  <llvm/Support/raw_ostream.h>
  )

if(OVERLAP_PRECOMPILED_HEADERS)
  add_library(OverlapPrecompiledHeaders OBJECT
              ${CMAKE_CURRENT_LIST_DIR}/PrecompiledHeaders.cpp)
  target_precompile_headers(OverlapPrecompiledHeaders
                            PRIVATE ${OVERLAP_PRECOMPILED_HEADER_LIST})
  # The flags LLVM's targets get (-fno-exceptions...), which a precompiled
  # header must share with the files that use it.
  llvm_update_compile_flags(OverlapPrecompiledHeaders)
  # Without its build time inside, ccache can reuse the header (with
  # sloppiness pch_defines,time_macros in its configuration).
  target_compile_options(OverlapPrecompiledHeaders
                         PRIVATE -Xclang -fno-pch-timestamp)
endif()

# The targets named reuse the precompiled headers (nothing without
# OVERLAP_PRECOMPILED_HEADERS).
function(overlap_use_precompiled_headers)
  if(OVERLAP_PRECOMPILED_HEADERS)
    foreach(target IN LISTS ARGN)
      target_precompile_headers(${target} REUSE_FROM OverlapPrecompiledHeaders)
    endforeach()
  endif()
endfunction()
