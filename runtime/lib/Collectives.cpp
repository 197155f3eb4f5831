//===- Collectives.cpp - Collective results from contributions ------------===//
//
// The data side of the collectives, shared by the transports: a device
// packs its input once into a contiguous contribution, and computes its
// output from all members' contributions (an asynchronous collective at its
// done, from an OwnedCall). Reductions combine the members in group-index
// order, so the result is bit-identical however the members' threads or
// processes were scheduled, and whether the call was blocking or not.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/Transport.h"

using namespace ovlrt;

/// The output's shape, which is also the shape of each part of a
/// reduce-scatter's input.
static std::vector<int64_t> outSizes(const Call &call) {
  return {call.out.sizes, call.out.sizes + call.out.rank};
}

OwnedCall::OwnedCall(const Call &original)
    : group(*original.group),
      opName(original.op.opName ? original.op.opName : ""),
      location(original.op.location ? original.op.location : ""),
      in(original.in), out(original.out),
      pairs(original.pairs.flat,
            original.pairs.flat + 2 * original.pairs.numPairs),
      call(original) {
  call.op = {opName.c_str(), original.op.location ? location.c_str() : nullptr};
  call.in = in.view();
  call.out = out.view();
  call.group = &group;
  call.pairs = {pairs.data(), original.pairs.numPairs};
}

int64_t ovlrt::contributionBytes(const Call &call) { return numBytes(call.in); }

void ovlrt::packContribution(const Call &call, void *dst) {
  if (call.kind != CallKind::ReduceScatter) {
    copyView(
        OwnedView::contiguous(dst, call.in.dtype,
                              {call.in.sizes, call.in.sizes + call.in.rank})
            .view(),
        call.in);
    return;
  }
  OwnedView in(call.in);
  int64_t partSize = call.out.sizes[call.dim];
  int64_t partBytes = numBytes(call.out);
  for (int64_t part = 0; part < call.layout.size(); ++part) {
    void *partDst = static_cast<char *>(dst) + part * partBytes;
    copyView(
        OwnedView::contiguous(partDst, call.in.dtype, outSizes(call)).view(),
        in.slice(call.dim, part * partSize, partSize).view());
  }
}

/// Reduces the output-sized block at `offset` bytes into each contribution
/// into `call.out`, through a staging buffer unless `out` is dense.
static void reduceInto(const Call &call, const void *const *contributions,
                       int64_t offset) {
  int64_t n = call.layout.size();
  std::vector<const void *> inputs(n);
  for (int64_t i = 0; i < n; ++i)
    inputs[i] = static_cast<const char *>(contributions[i]) + offset;
  int64_t count = numElements(call.out);
  if (isContiguous(call.out)) {
    reduceBuffers(call.in.dtype, call.reduction, inputs.data(), n,
                  call.out.data, count);
    return;
  }
  std::vector<char> staging(numBytes(call.out));
  reduceBuffers(call.in.dtype, call.reduction, inputs.data(), n, staging.data(),
                count);
  copyView(call.out,
           OwnedView::contiguous(staging.data(), call.out.dtype, outSizes(call))
               .view());
}

void ovlrt::combineContributions(const Call &call,
                                 const void *const *contributions) {
  switch (call.kind) {
  case CallKind::AllGather: {
    OwnedView out(call.out);
    std::vector<int64_t> inSizes(call.in.sizes, call.in.sizes + call.in.rank);
    int64_t partSize = call.in.sizes[call.dim];
    for (int64_t i = 0; i < call.layout.size(); ++i) {
      // const_cast: the contiguous view is only read from.
      void *part = const_cast<void *>(contributions[i]);
      copyView(out.slice(call.dim, i * partSize, partSize).view(),
               OwnedView::contiguous(part, call.in.dtype, inSizes).view());
    }
    return;
  }
  case CallKind::ReduceScatter:
    return reduceInto(call, contributions,
                      call.layout.index * numBytes(call.out));
  case CallKind::AllReduce:
    return reduceInto(call, contributions, 0);
  case CallKind::Permute:
    break;
  }
  fatal("internal error: a permute has no contributions to combine");
}
