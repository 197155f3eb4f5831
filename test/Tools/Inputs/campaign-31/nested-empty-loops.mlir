// Two nested loops of 2^20 iterations each, each under the 2^21 limit,
// producing no step.
shard.grid @g(shape = 4)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %q = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> tensor<4xf32> {
      scf.yield %b : tensor<4xf32>
    }
    scf.yield %q : tensor<4xf32>
  }
  %s = ovl.all_reduce %r on @g axes [0] : tensor<4xf32>
  return %s : tensor<4xf32>
}
