//===- MachineOptions.td - The options that name a machine -*- tablegen -*-===//
//
// The three options every cost-driven pass takes to build its machines
// (MachineModelCache): the hardware, the physical topology and where the
// grid's devices sit on it. Declared once; each pass appends them to its
// own options.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_ANALYSIS_MACHINEOPTIONS_TD
#define OVERLAP_ANALYSIS_MACHINEOPTIONS_TD

include "mlir/Pass/PassBase.td"

defvar Overlap_MachineOptions = [
  Option<"hardware", "hardware", "std::string", /*default=*/"\"tpu-v4\"",
         "Built-in hardware name or path of a JSON description">,
  Option<"topology", "topology", "std::string", /*default=*/"\"\"",
         "Physical extents such as 4x4x8 (default: near-cubic for the "
         "grid's device count)">,
  ListOption<"deviceAssignment", "device-assignment", "int64_t",
             "Physical device of each logical device (default: row-major)">,
];

#endif // OVERLAP_ANALYSIS_MACHINEOPTIONS_TD
