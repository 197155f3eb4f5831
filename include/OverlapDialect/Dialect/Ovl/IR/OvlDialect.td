//===- OvlDialect.td - The ovl dialect definition ----------*- tablegen -*-===//
//
// The `ovl` dialect: per-device (SPMD) collectives and einsums, the IR on
// which communication is decomposed and overlapped with dependent compute.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_IR_OVLDIALECT_TD
#define OVERLAP_DIALECT_OVL_IR_OVLDIALECT_TD

include "mlir/IR/OpBase.td"

def Ovl_Dialect : Dialect {
  let name = "ovl";
  let cppNamespace = "::mlir::ovl";
  let summary = "Collectives and einsums of per-device SPMD programs, "
                "and their decomposition into overlapped loops";
  let description = [{
    The `ovl` dialect describes the program that *one* device of a device
    grid runs after SPMD partitioning, as XLA does after its SPMD partitioner:
    tensors are the local shards, the grid is an upstream `shard.grid` symbol,
    and every communication is an explicit collective over a group of devices
    spanned by some of the grid's axes.

    Its operations are the vocabulary of the ASPLOS'23 paper "Overlap
    Communication with Dependent Computation via Decomposition in Large Deep
    Learning Models": an `ovl.all_gather` feeding an `ovl.einsum`, or an
    `ovl.einsum` feeding an `ovl.reduce_scatter`, is rewritten into a loop of
    partial einsums and `ovl.collective_permute` ring steps, whose permutes
    later become asynchronous `ovl.collective_permute_start` /
    `ovl.collective_permute_done` pairs that a scheduler places around the
    compute.

    **Groups.** A collective names a grid and a list of distinct grid axes.
    The devices that share their coordinates on every *other* axis form one
    group; a device's index inside its group is the row-major linearization
    of its coordinates along the listed axes, in the order they are listed.
    An empty axis list is a group of one device.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::arith::ArithDialect"];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasCanonicalizer = 0;
}

class Ovl_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ovl_Dialect, mnemonic, traits>;

#endif // OVERLAP_DIALECT_OVL_IR_OVLDIALECT_TD
