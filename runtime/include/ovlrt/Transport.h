//===- Transport.h - What a transport implements ----------------*- C++ -*-===//
//
// The pieces a transport (threads, MPI, ...) builds on, all independent of
// how bytes move: the checked description of one call that Device hands to
// its transport, the small descriptor peers compare to detect that they
// disagree about a collective, and the packing of a device's contribution
// to a collective and the computation of its result from all members'
// contributions (deterministic: members are combined in group-index order).
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_TRANSPORT_H
#define OVLRT_TRANSPORT_H

#include "ovlrt/Errors.h"
#include "ovlrt/Group.h"
#include "ovlrt/Tensor.h"

#include <string>
#include <vector>

namespace ovlrt {

enum class CallKind { AllGather, ReduceScatter, AllReduce, Permute };

/// One collective call whose arguments Device has checked: shapes agree with
/// the group size, the group and the pairs are valid.
struct Call {
  CallKind kind = CallKind::AllGather;
  /// The op name is always set (Device fills in the default).
  OpInfo op;
  TensorView in, out;
  const Group *group = nullptr;
  GroupLayout layout;
  /// The gathered or scattered dimension.
  int64_t dim = 0;
  Reduction reduction = Reduction::Sum;
  PermutePairs pairs;
};

/// A copy of a collective's Call that owns everything the call points to
/// but the views' data (shape arrays, group, op strings), so that the done
/// of an asynchronous collective can combine into `out` after the caller's
/// arguments are gone. Not copyable: the call points into it.
class OwnedCall {
public:
  explicit OwnedCall(const Call &call);
  OwnedCall(const OwnedCall &) = delete;
  OwnedCall &operator=(const OwnedCall &) = delete;

  const Call &get() const { return call; }

private:
  Group group;
  std::string opName, location;
  OwnedView in, out;
  std::vector<int64_t> pairs;
  Call call;
};

/// What peers compare to check that they take part in the same collective.
/// It owns copies of everything, so it can outlive the call.
struct CallDescriptor {
  CallKind kind = CallKind::AllGather;
  std::string opName, location;
  DType dtype = DType::F32;
  std::vector<int64_t> inSizes, outSizes;
  std::vector<int64_t> gridShape, axes;
  int64_t dim = 0;
  Reduction reduction = Reduction::Sum;
  /// Flat (source, target) pairs.
  std::vector<int64_t> pairs;
};

CallDescriptor describeCall(const Call &call);

/// An empty string if two members' calls match, otherwise the first
/// difference, e.g. "input types differ (4x8xf32 here, 4x4xf32 there)".
/// The blocking and the asynchronous permute match each other: they move
/// the same data.
std::string compareCalls(const CallDescriptor &mine,
                         const CallDescriptor &theirs);

/// Bytes of one member's contribution to a collective (not a permute).
int64_t contributionBytes(const Call &call);

/// Packs this device's input into `dst` (contributionBytes(call) bytes) in
/// the layout combineContributions reads: row-major, except that a
/// reduce-scatter's input is stored as its group-size parts along `dim`, one
/// after the other, each row-major, so that each member's part is one
/// contiguous block.
void packContribution(const Call &call, void *dst);

/// Computes this device's `out` from every member's packed contribution,
/// given in group-index order. `out` may alias this device's `in`.
void combineContributions(const Call &call, const void *const *contributions);

} // namespace ovlrt

#endif // OVLRT_TRANSPORT_H
