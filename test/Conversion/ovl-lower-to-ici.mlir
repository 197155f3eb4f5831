// RUN: overlap-opt %s --split-input-file --ovl-lower-to-ici="topology=4x4x4" | FileCheck %s --check-prefix=WRAP
// RUN: overlap-opt %s --split-input-file --ovl-lower-to-ici="topology=1x1x4" | FileCheck %s --check-prefix=LINE
// RUN: overlap-opt %s --split-input-file --ovl-lower-to-ici="topology=4x4x4 unidirectional=true" | FileCheck %s --check-prefix=UNI
// RUN: overlap-opt %s --split-input-file --ovl-lower-to-ici="topology=4x4x4 device=2" | FileCheck %s --check-prefix=DEV2
// RUN: overlap-opt %s --split-input-file --ovl-lower-to-ici="hardware=h100-nvlink" | FileCheck %s --check-prefix=SWITCH
// RUN: overlap-opt %s --split-input-file --ovl-lower-to-ici="topology=1x1x4 device-assignment=0,2,1,3" | FileCheck %s --check-prefix=ASSIGN

// A ring of four: on a 4x4x4 TPU v4 cube the z links wrap around, so each
// device reaches both ring neighbours in one hop, forward on z+ and backward
// on z- (the other direction of the ring's links), and the plan sends whole
// blocks both ways: ceil(3 / 2) = 2 rounds. On a 1x1x4 line without
// wrap-around the closing edge would walk back over three links: the plan
// runs the line both ways instead, and device 0, at its end, sends forward
// only, in 3 rounds.
shard.grid @ring(shape = 4)

// WRAP-LABEL: func.func @gather
// WRAP: ovl.all_gather {{.*}}ovl.ici = {algorithm = "bidirectional-whole on axis 0 (N=4)", estimate_s = {{.*}}, rounds = 2 : i64, transfers = [
// WRAP-SAME: {axes = array<i16: 0>, bytes = 512 : i64, direction = "forward", hops = 1 : i64, phase = "all_gather", rounds = 2 : i64, route = ["(0,0,0) z+"], to = "(0,0,1)"}
// WRAP-SAME: {axes = array<i16: 0>, bytes = 512 : i64, direction = "backward", hops = 1 : i64, phase = "all_gather", rounds = 2 : i64, route = ["(0,0,0) z-"], to = "(0,0,3)"}
// LINE-LABEL: func.func @gather
// LINE: algorithm = "line on axis 0 (N=4)", {{.*}}rounds = 3 : i64, transfers = [{{{.*}}direction = "forward", hops = 1 : i64, {{.*}}route = ["(0,0,0) z+"], to = "(0,0,1)"}]
// UNI-LABEL: func.func @gather
// UNI: algorithm = "unidirectional on axis 0 (N=4)", {{.*}}rounds = 3 : i64, transfers = [{{{.*}}bytes = 512 : i64, direction = "forward"
// UNI-NOT: backward
// UNI: return
// DEV2-LABEL: func.func @gather
// DEV2: route = ["(0,0,2) z+"], to = "(0,0,3)"
// DEV2-SAME: route = ["(0,0,2) z-"], to = "(0,0,1)"
// SWITCH-LABEL: func.func @gather
// SWITCH: route = ["0 egress", "1 ingress"], to = "(1)"
// SWITCH-SAME: route = ["0 egress", "3 ingress"], to = "(3)"
// ASSIGN-LABEL: func.func @gather
// ASSIGN: algorithm = "line on axis 0 (N=4)", {{.*}}direction = "forward", hops = 2 : i64, {{.*}}route = ["(0,0,0) z+", "(0,0,1) z+"], to = "(0,0,2)"
func.func @gather(%x: tensor<8x16xf32>) -> tensor<32x16xf32> {
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<8x16xf32> -> tensor<32x16xf32>
  return %0 : tensor<32x16xf32>
}

// -----

// A reduce-scatter passes result-sized blocks; an all-reduce is a
// reduce-scatter then an all-gather of 1/N of the buffer; a permute sends
// its whole input to the target paired with the device, a start with no
// estimate (its transfer runs beside what follows).
shard.grid @ring(shape = 4)

// WRAP-LABEL: func.func @others
// WRAP: ovl.reduce_scatter {{.*}}bytes = 512 : i64, direction = "forward", {{.*}}phase = "reduce_scatter"
// WRAP: ovl.all_reduce {{.*}}rounds = 4 : i64, transfers = [{{{.*}}bytes = 128 : i64, direction = "forward", {{.*}}phase = "reduce_scatter"
// WRAP-SAME: bytes = 128 : i64, direction = "forward", {{.*}}phase = "all_gather"
// WRAP: ovl.collective_permute {{.*}}ovl.ici = {estimate_s = {{.*}}, transfers = [{bytes = 512 : i64, hops = 1 : i64, rounds = 1 : i64, route = ["(0,0,0) z-"], to = "(0,0,3)"}]}
// WRAP: ovl.collective_permute_start {{.*}}ovl.ici = {transfers = [{bytes = 512 : i64, hops = 1 : i64, rounds = 1 : i64, route = ["(0,0,0) z+"]
func.func @others(%x: tensor<8x16xf32>, %y: tensor<32x16xf32>) {
  %0 = ovl.reduce_scatter %y on @ring axes [0] dim 0 : tensor<32x16xf32> -> tensor<8x16xf32>
  %1 = ovl.all_reduce %x on @ring axes [0] : tensor<8x16xf32>
  %2 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 3, 3 -> 0, 1 -> 2, 2 -> 1] : tensor<8x16xf32>
  %dest = tensor.empty() : tensor<8x16xf32>
  %4, %t = ovl.collective_permute_start %x into %dest on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<8x16xf32>
  %5 = ovl.collective_permute_done %t keep(%x) into %4 : tensor<8x16xf32>
  return
}
