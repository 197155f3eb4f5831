//===- Device.cpp - Argument checks and request bookkeeping ---------------===//
//
// The transport-independent half of Device: it fills in default op names,
// checks every call's arguments against the dialect's constraints (group,
// shapes, dimension, reduction, pairs), keeps the table of asynchronous
// calls (permutes and collectives) in flight so that a done without a
// start, a second done and a program that ends with calls in flight are
// reported, and tracks each thread's current device.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/Runtime.h"

#include "ovlrt/Transport.h"

using namespace ovlrt;

Device::Device(int64_t id, int64_t numDevices)
    : deviceId(id), worldSize(numDevices) {}

Device::~Device() = default;

void Device::fail(const OpInfo &op, const std::string &message) const {
  fatal(deviceId, op, message);
}

static OpInfo withDefaultName(OpInfo op, const char *name) {
  if (!op.opName)
    op.opName = name;
  return op;
}

int64_t Device::partitionId(const Group &group, OpInfo op) {
  op = withDefaultName(op, "ovl.partition_id");
  std::string error = checkGroup(group, worldSize);
  if (!error.empty())
    fail(op, error);
  return layoutGroup(group, deviceId).index;
}

Call Device::prepare(CallKind kind, const TensorView &in, const TensorView &out,
                     const Group &group, const OpInfo &op) const {
  std::string error = checkGroup(group, worldSize);
  if (!error.empty())
    fail(op, error);
  if (std::string inError = checkView(in); !inError.empty())
    fail(op, "input: " + inError);
  if (std::string outError = checkView(out); !outError.empty())
    fail(op, "output: " + outError);
  if (in.dtype != out.dtype || in.rank != out.rank)
    fail(op, "input " + formatType(in) + " and output " + formatType(out) +
                 " differ in element type or rank");
  Call call;
  call.kind = kind;
  call.op = op;
  call.in = in;
  call.out = out;
  call.group = &group;
  call.layout = layoutGroup(group, deviceId);
  return call;
}

/// Checks that `in` and `out` agree on every dimension but `dim`, where
/// `big` must be the group size times `small`.
static std::string checkScaledDim(const TensorView &small,
                                  const TensorView &big, int64_t dim,
                                  int64_t groupSize) {
  if (dim < 0 || dim >= small.rank)
    return "dim " + std::to_string(dim) + " is out of range for " +
           formatType(small);
  for (int64_t d = 0; d < small.rank; ++d) {
    int64_t expected = d == dim ? small.sizes[d] * groupSize : small.sizes[d];
    if (big.sizes[d] != expected)
      return "size " + std::to_string(big.sizes[d]) + " of dim " +
             std::to_string(d) + " should be " + std::to_string(expected);
  }
  return "";
}

static void checkReduction(const Device &device, const OpInfo &op,
                           Reduction reduction) {
  if (!isValidReduction(static_cast<int64_t>(reduction)))
    fatal(device.id(), op,
          "invalid reduction " +
              std::to_string(static_cast<int64_t>(reduction)));
}

Call Device::prepareAllGather(const TensorView &in, const TensorView &out,
                              const Group &group, int64_t dim,
                              const OpInfo &op) const {
  Call call = prepare(CallKind::AllGather, in, out, group, op);
  std::string error = checkScaledDim(in, out, dim, call.layout.size());
  if (!error.empty())
    fail(op, "gathering " + formatType(in) + " along dim " +
                 std::to_string(dim) + " over " +
                 std::to_string(call.layout.size()) + " devices into " +
                 formatType(out) + ": " + error);
  call.dim = dim;
  return call;
}

Call Device::prepareReduceScatter(const TensorView &in, const TensorView &out,
                                  const Group &group, int64_t dim,
                                  Reduction reduction, const OpInfo &op) const {
  checkReduction(*this, op, reduction);
  Call call = prepare(CallKind::ReduceScatter, in, out, group, op);
  std::string error = checkScaledDim(out, in, dim, call.layout.size());
  if (!error.empty())
    fail(op, "scattering " + formatType(in) + " along dim " +
                 std::to_string(dim) + " over " +
                 std::to_string(call.layout.size()) + " devices into " +
                 formatType(out) + ": input " + error);
  call.dim = dim;
  call.reduction = reduction;
  return call;
}

Call Device::prepareAllReduce(const TensorView &in, const TensorView &out,
                              const Group &group, Reduction reduction,
                              const OpInfo &op) const {
  checkReduction(*this, op, reduction);
  Call call = prepare(CallKind::AllReduce, in, out, group, op);
  if (!sameType(in, out))
    fail(op, "input " + formatType(in) + " and output " + formatType(out) +
                 " differ");
  call.reduction = reduction;
  return call;
}

void Device::allGather(const TensorView &in, const TensorView &out,
                       const Group &group, int64_t dim, OpInfo op) {
  op = withDefaultName(op, "ovl.all_gather");
  runCollective(prepareAllGather(in, out, group, dim, op));
}

void Device::reduceScatter(const TensorView &in, const TensorView &out,
                           const Group &group, int64_t dim, Reduction reduction,
                           OpInfo op) {
  op = withDefaultName(op, "ovl.reduce_scatter");
  runCollective(prepareReduceScatter(in, out, group, dim, reduction, op));
}

void Device::allReduce(const TensorView &in, const TensorView &out,
                       const Group &group, Reduction reduction, OpInfo op) {
  op = withDefaultName(op, "ovl.all_reduce");
  runCollective(prepareAllReduce(in, out, group, reduction, op));
}

void Device::permute(const TensorView &in, const TensorView &out,
                     const Group &group, PermutePairs pairs, OpInfo op) {
  op = withDefaultName(op, "ovl.collective_permute");
  permuteDone(permuteStart(in, out, group, pairs, op), op);
}

Request Device::permuteStart(const TensorView &in, const TensorView &out,
                             const Group &group, PermutePairs pairs,
                             OpInfo op) {
  op = withDefaultName(op, "ovl.collective_permute_start");
  Call call = prepare(CallKind::Permute, in, out, group, op);
  if (!sameType(in, out))
    fail(op, "input " + formatType(in) + " and output " + formatType(out) +
                 " differ");
  std::string error = checkPairs(pairs, call.layout.size());
  if (!error.empty())
    fail(op, "invalid pairs " + formatPairs(pairs) + ": " + error);
  call.pairs = pairs;
  Request request = track(call);
  startPermute(call, request);
  return request;
}

void Device::permuteDone(Request request, OpInfo op) {
  op = withDefaultName(op, "ovl.collective_permute_done");
  auto it = findInFlight(request, op, "permute start");
  if (it->second.kind != CallKind::Permute)
    fail(op, "request " + std::to_string(request.id) + " was returned by " +
                 formatOp(
                     {it->second.opName.c_str(), it->second.location.c_str()}) +
                 ", not by a permute start: a collective done completes it");
  finishPermute(request, op);
  inFlight.erase(it);
}

Request Device::allGatherStart(const TensorView &in, const TensorView &out,
                               const Group &group, int64_t dim, OpInfo op) {
  op = withDefaultName(op, "ovl.all_gather_start");
  Call call = prepareAllGather(in, out, group, dim, op);
  Request request = track(call);
  startCollective(call, request);
  return request;
}

Request Device::reduceScatterStart(const TensorView &in, const TensorView &out,
                                   const Group &group, int64_t dim,
                                   Reduction reduction, OpInfo op) {
  op = withDefaultName(op, "ovl.reduce_scatter_start");
  Call call = prepareReduceScatter(in, out, group, dim, reduction, op);
  Request request = track(call);
  startCollective(call, request);
  return request;
}

Request Device::allReduceStart(const TensorView &in, const TensorView &out,
                               const Group &group, Reduction reduction,
                               OpInfo op) {
  op = withDefaultName(op, "ovl.all_reduce_start");
  Call call = prepareAllReduce(in, out, group, reduction, op);
  Request request = track(call);
  startCollective(call, request);
  return request;
}

/// The name of the done that completes a call of `kind`.
static const char *doneName(CallKind kind) {
  return kind == CallKind::Permute ? "ovl.collective_permute_done"
                                   : "ovl.collective_done";
}

void Device::collectiveDone(Request request, OpInfo op) {
  auto known = inFlight.find(request.id);
  op = withDefaultName(op, known == inFlight.end()
                               ? "ovl.collective_done"
                               : doneName(known->second.kind));
  auto it = findInFlight(request, op, "start");
  if (it->second.kind == CallKind::Permute)
    finishPermute(request, op);
  else
    finishCollective(request, op);
  inFlight.erase(it);
}

Request Device::track(const Call &call) {
  Request request{nextRequest++};
  inFlight[request.id] = {call.kind, call.op.opName,
                          call.op.location ? call.op.location : ""};
  return request;
}

Device::InFlightTable::iterator
Device::findInFlight(Request request, const OpInfo &op, const char *starts) {
  auto it = inFlight.find(request.id);
  if (it == inFlight.end())
    fail(op, "request " + std::to_string(request.id) +
                 " is not in flight on this device: " +
                 (request.id > 0 && request.id < nextRequest
                      ? std::string("it has already completed")
                      : std::string("no ") + starts + " returned it"));
  return it;
}

void Device::checkProgramEnd() const {
  if (inFlight.empty())
    return;
  int64_t permutes = 0;
  std::string starts;
  for (const auto &[id, start] : inFlight) {
    permutes += start.kind == CallKind::Permute;
    starts += starts.empty() ? "" : ", ";
    starts += formatOp({start.opName.c_str(), start.location.c_str()}) +
              " (request " + std::to_string(id) + ")";
  }
  int64_t collectives = numInFlight() - permutes;
  std::string counts;
  if (permutes)
    counts = std::to_string(permutes) + " permute(s)";
  if (collectives)
    counts += (counts.empty() ? "" : " and ") + std::to_string(collectives) +
              " collective(s)";
  fatal("device " + std::to_string(deviceId) + ": the program ended with " +
        counts + " started and never done: " + starts);
}

static thread_local Device *threadDevice = nullptr;

Device &ovlrt::currentDevice() {
  if (!threadDevice)
    fatal("no device on this thread: runtime entry points must be called "
          "from a device's program (e.g. inside ThreadsWorld::run)");
  return *threadDevice;
}

void ovlrt::setCurrentDevice(Device *device) { threadDevice = device; }
