// --all-functions plays every function with a body in module order, one
// report each (a JSON list of {function, report} with --json), each the
// report --entry gives for that function alone; private functions count,
// declarations do not.
//
// RUN: split-file %s %t
// RUN: overlap-sim %t/main.mlir --all-functions --json --topology 4x4x4 > %t.all.json
// RUN: overlap-sim %t/main.mlir --entry blocking --json --topology 4x4x4 > %t.blocking.json
// RUN: overlap-sim %t/main.mlir --entry overlapped --json --topology 4x4x4 > %t.overlapped.json
// RUN: %python -c "import json,sys; a=json.load(open(sys.argv[1])); print([r['function'] for r in a]); sys.exit(0 if [r['report'] for r in a] == [json.load(open(f)) for f in sys.argv[2:]] else 1)" %t.all.json %t.blocking.json %t.overlapped.json | FileCheck %s --check-prefix=NAMES
// RUN: overlap-sim %t/main.mlir --all-functions --topology 4x4x4 | FileCheck %s --check-prefix=TEXT
// RUN: not overlap-sim %t/main.mlir --all-functions --entry blocking 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not overlap-sim %t/main.mlir --all-functions --trace %t.trace.json 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: overlap-sim %t/main.mlir --all-functions --entry blocking; test $? -eq 2
// RUN: not overlap-sim %t/none.mlir --all-functions 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not overlap-sim %t/bad.mlir --all-functions 2>&1 | FileCheck %s --check-prefix=BAD

// NAMES: ['blocking', 'overlapped']
// TEXT: @blocking
// TEXT-NEXT: hardware tpu-v4
// TEXT: step time
// TEXT: @overlapped
// TEXT-NEXT: hardware tpu-v4
// TEXT: step time
// ENTRY: overlap-sim: --all-functions takes neither --entry nor --trace
// NONE: error: no function with a body to simulate
// BAD: bad.mlir:8:8: error: the simulator plays loops with constant bounds and a positive constant step only

//--- main.mlir
shard.grid @ring(shape = 4)

func.func private @declared(tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>

func.func @blocking(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) {
  %p = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %y = ovl.einsum "ik,kj->ij" %x, %w : tensor<1024x1024xbf16>, tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
  return %p, %y : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
}

func.func private @overlapped(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>, %r: tensor<1024x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) {
  %p, %t = ovl.collective_permute_start %x into %r on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %y = ovl.einsum "ik,kj->ij" %x, %w : tensor<1024x1024xbf16>, tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
  %d = ovl.collective_permute_done %t keep(%x) into %p : tensor<1024x1024xbf16>
  return %d, %y : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
}

//--- none.mlir
func.func private @declared(tensor<4xf32>) -> tensor<4xf32>

//--- bad.mlir
shard.grid @ring(shape = 4)
func.func @fine(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}
func.func @f(%n: index, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4x4xf32> {
    %p = ovl.collective_permute %a on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4x4xf32>
    scf.yield %p : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}
