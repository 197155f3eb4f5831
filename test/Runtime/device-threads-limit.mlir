// The threads transport runs each device as a thread of overlap-run: what
// the process's limits cannot hold is refused, with the numbers, before
// the first thread starts. 4096 devices under an 8 GB address-space limit
// (8 MiB of stack each) and 65536 devices without one used to abort
// (std::thread's failure, uncaught), leaving no message.
// UNSUPPORTED: sanitized
// (AddressSanitizer maps terabytes of shadow memory: no address-space
// limit lets an instrumented tool start.)
//
// RUN: sh -c 'ulimit -s 8192; ulimit -v 8000000; overlap-run %s; echo "exit status $?"' 2>&1 | FileCheck %s

// CHECK: ovlrt: error: cannot run the devices as threads: 4096 device threads of 8 MiB of stack each need 32768 MiB of address space, more than the process's limit of 7812 MiB (ulimit -v); run them as MPI ranks (--transport mpi under mpirun)
// CHECK: exit status 70
shard.grid @g(shape = 4096)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = ovl.all_reduce %x on @g axes [0] : tensor<4xf32>
  return %s : tensor<4xf32>
}
