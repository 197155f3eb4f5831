/*===-- overlap-c/Simulator.h - Simulate an ovl program on a pod --*- C -*-===*\
|*                                                                            *|
|* The C form of `overlap-sim --json`: plays one function of a module on a    *|
|* model of an accelerator pod and returns the report as JSON (the fields are *|
|* those of docs/Simulator.md: step_time_s, compute_time_s, comm_time_s,      *|
|* exposed_comm_time_s, overlap_fraction, ..., ops).                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OVERLAP_C_SIMULATOR_H
#define OVERLAP_C_SIMULATOR_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Simulates the function `entry` of `module` (empty: the only public
/// function with a body) on `hardware` (a built-in name such as "tpu-v4",
/// "tpu-v5e", "tpu-v5p", "h100-nvlink", or the path of a JSON description)
/// laid out as `topology` ("AxBxC"), logical device i on physical device
/// `deviceAssignment[i]`. Each left empty (`numAssigned` == 0 for the
/// assignment) is the one ovl-overlap-pipeline recorded on the module
/// (`ovl.machine`), else the default: "tpu-v4", near-cubic for the grid's
/// device count, row-major; one given that differs from the recorded one
/// gets a warning on the module. `maxInFlight`
/// limits the asynchronous transfers per device (0: the hardware's DMA
/// slots). The module is first checked as ovl-verify-collectives does (all
/// devices must communicate alike). On success calls `callback` with the JSON
/// report (possibly in several pieces, as mlirOperationPrint does) and returns
/// success; on failure emits a diagnostic on the module's context and does not
/// call it.
MLIR_CAPI_EXPORTED MlirLogicalResult
overlapSimulate(MlirModule module, MlirStringRef entry, MlirStringRef hardware,
                MlirStringRef topology, intptr_t numAssigned,
                const int64_t *deviceAssignment, unsigned maxInFlight,
                MlirStringCallback callback, void *userData);

/// The same, returning the JSON report as a NUL-terminated string owned by
/// the caller (free it with overlapStringFree), or NULL on failure. Handy
/// from ctypes.
MLIR_CAPI_EXPORTED char *overlapSimulateToJSON(MlirModule module,
                                               MlirStringRef entry,
                                               MlirStringRef hardware,
                                               MlirStringRef topology);

/// Frees a string returned by this API. NULL is allowed.
MLIR_CAPI_EXPORTED void overlapStringFree(char *string);

#ifdef __cplusplus
}
#endif

#endif // OVERLAP_C_SIMULATOR_H
