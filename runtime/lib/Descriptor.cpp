//===- Descriptor.cpp - Matching peers' calls -----------------------------===//
//
// Builds the descriptor of a call and compares two members' descriptors.
// Transports publish the descriptor with each call and compare it with their
// peers' at the same step of the group, which turns an SPMD program whose
// devices disagree (a different collective, shape, type, dimension,
// reduction or permutation) into an error naming the difference instead of
// corrupted data or a hang.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/Transport.h"

using namespace ovlrt;

CallDescriptor ovlrt::describeCall(const Call &call) {
  CallDescriptor desc;
  desc.kind = call.kind;
  desc.opName = call.op.opName ? call.op.opName : "";
  desc.location = call.op.location ? call.op.location : "";
  desc.dtype = call.in.dtype;
  desc.inSizes.assign(call.in.sizes, call.in.sizes + call.in.rank);
  desc.outSizes.assign(call.out.sizes, call.out.sizes + call.out.rank);
  desc.gridShape = call.group->gridShape;
  desc.axes = call.group->axes;
  desc.dim = call.dim;
  desc.reduction = call.reduction;
  if (call.kind == CallKind::Permute)
    desc.pairs.assign(call.pairs.flat,
                      call.pairs.flat + 2 * call.pairs.numPairs);
  return desc;
}

static std::string formatSizes(const std::vector<int64_t> &sizes) {
  if (sizes.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i)
    text += (i ? "x" : "") + std::to_string(sizes[i]);
  return text;
}

static std::string differ(const std::string &what, const std::string &mine,
                          const std::string &theirs) {
  return what + " differ (" + mine + " here, " + theirs + " there)";
}

std::string ovlrt::compareCalls(const CallDescriptor &mine,
                                const CallDescriptor &theirs) {
  if (mine.kind != theirs.kind)
    return differ("the operations", mine.opName, theirs.opName);
  if (mine.gridShape != theirs.gridShape)
    return differ("grid shapes", formatList(mine.gridShape),
                  formatList(theirs.gridShape));
  if (mine.axes != theirs.axes)
    return differ("grid axes", formatList(mine.axes), formatList(theirs.axes));
  if (mine.dtype != theirs.dtype)
    return differ("element types", dtypeName(mine.dtype),
                  dtypeName(theirs.dtype));
  if (mine.inSizes != theirs.inSizes)
    return differ("input shapes", formatSizes(mine.inSizes),
                  formatSizes(theirs.inSizes));
  bool hasDim =
      mine.kind == CallKind::AllGather || mine.kind == CallKind::ReduceScatter;
  if (hasDim && mine.dim != theirs.dim)
    return differ("dims", std::to_string(mine.dim), std::to_string(theirs.dim));
  bool reduces =
      mine.kind == CallKind::ReduceScatter || mine.kind == CallKind::AllReduce;
  if (reduces && mine.reduction != theirs.reduction)
    return differ("reductions", reductionName(mine.reduction),
                  reductionName(theirs.reduction));
  if (mine.outSizes != theirs.outSizes)
    return differ("output shapes", formatSizes(mine.outSizes),
                  formatSizes(theirs.outSizes));
  if (mine.pairs != theirs.pairs) {
    auto format = [](const std::vector<int64_t> &flat) {
      return formatPairs({flat.data(), static_cast<int64_t>(flat.size() / 2)});
    };
    return differ("pairs", format(mine.pairs), format(theirs.pairs));
  }
  return "";
}
