// .npy inputs of another width are converted only where every element is
// exact in the program's type; otherwise overlap-run refuses the file and
// names the element (it used to wrap 2^40 + 5 to 5 in i32, and turn f64
// 1e10 into inf in f16).
//
// RUN: rm -rf %t && mkdir -p %t/wide %t/fits %t/f16 %t/f32 %t/widen
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([2**40 + 5, 1], np.int64))" %t/wide/device0_input0.npy
// RUN: sh -c 'overlap-run %s --entry ints --inputs %t/wide 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=WIDE
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([-7, 100000], np.int64))" %t/fits/device0_input0.npy
// RUN: overlap-run %s --entry ints --inputs %t/fits --print-outputs | FileCheck %s --check-prefix=FITS
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([1e10, 1.0], np.float64))" %t/f16/device0_input0.npy
// RUN: sh -c 'overlap-run %s --entry halves --inputs %t/f16 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=F16
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([0.5, 0.1], np.float64))" %t/f32/device0_input0.npy
// RUN: sh -c 'overlap-run %s --entry floats --inputs %t/f32 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=F32
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([0.5, 0.1], np.float32))" %t/widen/device0_input0.npy
// RUN: overlap-run %s --entry doubles --inputs %t/widen --print-outputs | FileCheck %s --check-prefix=WIDEN

// WIDE: overlap-run: error: {{.*}}device0_input0.npy: element 0 (1099511627781) does not fit i32; write the file as <i4
// WIDE: exit status 2
// FITS: device 0 output 0 (2xi32): [-7, 100000]
// F16: overlap-run: error: {{.*}}device0_input0.npy: element 0 (10000000000) is not exact in f16 (it would be inf); write the file as <f2
// F16: exit status 2
// F32: overlap-run: error: {{.*}}device0_input0.npy: element 1 (0.10000000000000001) is not exact in f32 (it would be 0.10000000149011612); write the file as <f4
// F32: exit status 2
// WIDEN: device 0 output 0 (2xf64): [0.5, 0.1]

shard.grid @one(shape = 1)

func.func @ints(%x: tensor<2xi32>) -> tensor<2xi32> {
  return %x : tensor<2xi32>
}
func.func @halves(%x: tensor<2xf16>) -> tensor<2xf16> {
  return %x : tensor<2xf16>
}
func.func @floats(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @doubles(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
