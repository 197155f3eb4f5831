//===- InitAll.cpp - Register everything overlap provides -----------------===//

#include "OverlapDialect/InitAll.h"

#include "OverlapDialect/Conversion/Passes.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/BufferizableOpInterfaceImpl.h"
#include "OverlapDialect/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void overlap::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::ovl::OvlDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::shard::ShardDialect, mlir::tensor::TensorDialect>();
  mlir::ovl::registerBufferizableOpInterfaceExternalModels(registry);
}

void overlap::registerAllPasses() {
  mlir::ovl::registerOverlapConversionPasses();
  registerOvlToLLVMPipeline();
}
