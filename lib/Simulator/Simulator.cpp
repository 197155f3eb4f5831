//===- Simulator.cpp - Event simulation of an SPMD program ----------------===//
//
// A discrete-event simulation of every logical device playing the same flat
// step list. Devices are state machines advanced by events from one priority
// queue ordered by (time, sequence number), so equal times resolve in the
// order events were scheduled and every run is deterministic.
//
// Transfers have two phases: a latency phase (launch overhead for permutes,
// then hop latency times hops) and a fluid phase in which every link of the
// route carries it; its rate is the minimum over its links of the link's
// bandwidth divided by the transfers in their fluid phase on that link.
// Rates are recomputed when a transfer enters or leaves a link, which
// moves the finish events of the transfers whose rate changed: each is
// replaced in the queue where it is, by the event a new push would make
// (the same time and sequence number), so that the queue holds one finish
// per transfer rather than every superseded one; a transfer left without
// bandwidth has its finish turned into a dropped event, popped without
// effect.
//
// Collectives play the rounds of their CollectivePlan, the one model of
// collectives the cost model prices too (MachineModel::planCollective): in
// each round every device starts its sends and waits for them and for the
// messages addressed to it. A device's part of one collective is a
// CollectiveRun, which plays alike for a blocking collective and an
// asynchronous one; only whether the device waits for it at once (blocking)
// or at its done while holding a DMA slot (asynchronous) differs, so both
// forms synchronize with the group and share links identically. A
// point-to-point transfer is split over the routes of its ports
// (Topology::routes); it arrives when its last part does. Messages are
// matched by a packed key (message slot of the program, device, send or
// receive) through one hash set of keys that completed before anyone waited
// for them.
//
// Simultaneous events give the same figures in any order. Rates change
// once per instant: the events of one time settle the transfers on the
// links they touch (their bytes moved so far, at the old rates) and mark
// them, and the marked transfers get their new rates when the instant is
// over, from the final counts on their links. A device's communication
// intervals that touch are merged, whichever of the end and the next start
// comes first, and its bytes sent are summed in fixed point. Everything
// else a device accumulates follows its program order.
//
// That is what lets the simulation play one device per orbit of a
// DeviceSymmetry. The translations of the group map the machine and the
// program's communication onto themselves, so they map any order of the
// events of an instant onto another order of the same events; by the
// above, the state after every instant is then invariant under them: a
// moved device has the same state as the device, a moved transfer the same
// bytes and rate. The simulation keeps one device per orbit (its lowest
// logical device) and one link per orbit of links, counting on that link
// the parts of every played transfer whose route crosses a link of its
// orbit, which is how many transfers cross each link of the orbit in the
// full simulation. A played device's send to any device is the image of the
// send into that device's representative, so messages go to
// representatives, and every figure of the report is that of the critical
// device's representative, bit for bit. Preconditions that fail (a
// switch, no translation that maps the program onto itself) leave every
// device in an orbit of its own: the brute-force simulation, which
// SimOptions::bruteForce also asks for.
//
// Cost: every device step does O(1) work plus its transfers; every transfer
// causes O(1 + transfers sharing its links) rate updates, each a heap push
// or a move of its finish in the heap.
// With links lightly shared the total is O(played devices x steps x
// log(events in the queue)), and memory is O(played devices + links +
// transfers in flight). Finding the symmetry costs O(devices x distinct
// communication patterns) per translation tried.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Simulator/Simulator.h"

#include "OverlapDialect/Simulator/DeviceSymmetry.h"
#include "OverlapDialect/Support/DaryHeap.h"

#include "ChromeTrace.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir::ovl;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::StringRef stringifyStepKind(SimStep::Kind kind) {
  switch (kind) {
  case SimStep::Kind::Compute:
    return "compute";
  case SimStep::Kind::Collective:
    return "collective";
  case SimStep::Kind::Permute:
    return "permute";
  case SimStep::Kind::PermuteStart:
    return "permute-start";
  case SimStep::Kind::PermuteDone:
    return "permute-done";
  case SimStep::Kind::CollectiveStart:
    return "collective-start";
  case SimStep::Kind::CollectiveDone:
    return "collective-done";
  }
  llvm_unreachable("unknown step kind");
}

namespace {

/// Group arithmetic along some grid axes (DeviceAssignment::groupIndex and
/// groupMember) with the strides computed once.
struct GroupView {
  llvm::SmallVector<int64_t, 3> sizes;
  llvm::SmallVector<int64_t, 3> strides;
  int64_t size = 1;

  GroupView(llvm::ArrayRef<int64_t> gridShape, llvm::ArrayRef<int16_t> axes) {
    for (int16_t axis : axes) {
      int64_t stride = 1;
      for (size_t i = axis + 1; i < gridShape.size(); ++i)
        stride *= gridShape[i];
      sizes.push_back(gridShape[axis]);
      strides.push_back(stride);
      size *= gridShape[axis];
    }
  }

  int64_t index(int64_t logical) const {
    int64_t result = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
      result = result * sizes[i] + logical / strides[i] % sizes[i];
    return result;
  }

  int64_t member(int64_t logical, int64_t index) const {
    for (size_t i = sizes.size(); i-- > 0;) {
      int64_t coord = logical / strides[i] % sizes[i];
      logical += (index % sizes[i] - coord) * strides[i];
      index /= sizes[i];
    }
    return logical;
  }
};

/// One send of a collective round (CollectiveSend) with its group view.
struct RoundSend {
  uint32_t view;
  int64_t shift;
  bool wraps;
  double bytes;
};

/// One round of a collective: sends[sendsBegin, sendsEnd), whose messages
/// take the slots slotOffset + i of the collective's step (from 1: slot 0
/// tells a device that its part of the collective is done).
struct Round {
  uint32_t sendsBegin;
  uint32_t sendsEnd;
  uint64_t slotOffset;
};

/// What the simulation precomputes for one step of the program.
struct StepInfo {
  /// The first message slot of the step (see Simulation::key).
  uint64_t slotBase = 0;
  /// Permute, PermuteStart: the group; its pairs by group index.
  uint32_t view = 0;
  uint32_t permute = 0;
  /// Collective, CollectiveStart: its rounds, rounds[roundsBegin,
  /// roundsEnd).
  uint32_t roundsBegin = 0;
  uint32_t roundsEnd = 0;
};

/// The pairs of a permute by group index: whom each index sends to and
/// receives from (-1 for nobody).
struct PermuteTable {
  uint32_t view = 0;
  std::vector<int64_t> targetOf;
  std::vector<int64_t> sourceOf;
};

/// Whom `logical` sends to in a collective send along `view` (`shift` =
/// the send's shift), or receives from (`shift` = -the send's shift): the
/// member that many group indices on, round the ring when the send
/// `wraps`; -1 past an end of a line.
static int64_t ringPeer(const GroupView &view, bool wraps, int64_t logical,
                        int64_t shift) {
  int64_t n = view.size;
  int64_t index = view.index(logical) + shift;
  if (wraps)
    index = (index % n + n) % n;
  else if (index < 0 || index >= n)
    return -1;
  return view.member(logical, index);
}

/// Whom `logical` sends to in a permute with `table` (or receives from,
/// with `bySource`); -1 for nobody.
static int64_t permutePeer(const GroupView &view, const PermuteTable &table,
                           int64_t logical, bool bySource) {
  int64_t index = view.index(logical);
  int64_t peer = bySource ? table.sourceOf[index] : table.targetOf[index];
  return peer < 0 ? -1 : view.member(logical, peer);
}

/// A way devices pick peers, which the symmetry must map onto itself: a
/// collective send along `view` by `shift`, or permute table `permute`.
/// Checking whom devices send to suffices: receiving is its inverse.
struct CommPattern {
  uint32_t view;
  uint32_t permute;
  int64_t shift;
  bool wraps;
  bool isPermute;

  friend bool operator<(const CommPattern &a, const CommPattern &b) {
    return std::tie(a.view, a.permute, a.shift, a.wraps, a.isPermute) <
           std::tie(b.view, b.permute, b.shift, b.wraps, b.isPermute);
  }
};

/// Orders permutes by (view, pairs) by content.
struct PairsLess {
  using Key = std::pair<uint32_t, llvm::ArrayRef<std::pair<int64_t, int64_t>>>;
  bool operator()(const Key &a, const Key &b) const {
    if (a.first != b.first)
      return a.first < b.first;
    return std::lexicographical_compare(a.second.begin(), a.second.end(),
                                        b.second.begin(), b.second.end());
  }
};

enum class DeviceState : uint8_t {
  Running,
  Computing,
  Collective,
  Permute,
  Slot,
  Done,
  Finished,
};

/// The most messages one waits for at once: one per send of a collective
/// round (both directions of a ring for each part of a plan over up to four
/// axes).
constexpr uint32_t kMaxExpect = 8;

constexpr uint32_t kNoRun = ~uint32_t(0);

/// What a device or a collective run waits for: the keys in `expect`, and
/// `pending` counting them plus its own sends in flight it waits for.
struct Waits {
  int32_t pending = 0;
  uint32_t numExpect = 0;
  uint64_t expect[kMaxExpect] = {};
};

/// Bytes sent are summed in units of 2^-32 bytes, exactly, so that the sum
/// does not depend on the order of simultaneous sends. (A power of two:
/// scaling by it is exact.)
constexpr double kSentUnitsPerByte = 0x1p32;

/// One played device's progress.
struct Device : Waits {
  DeviceState state = DeviceState::Running;
  uint32_t pc = 0;
  int32_t inFlight = 0;
  int32_t commDepth = 0;
  /// Its collective runs, linked by CollectiveRun::next.
  uint32_t firstRun = kNoRun;
  /// When the current blocking op or wait began.
  double opBegin = 0;
  /// The current communication interval; with commDepth 0 and
  /// commPending, it ended at commEnd and is not yet in commTime, since a
  /// start at that very time continues it.
  double commStart = 0;
  double commEnd = 0;
  bool commPending = false;
  double commTime = 0;
  double computeTime = 0;
  double finish = 0;
  unsigned __int128 sentUnits = 0;
};

/// One device's part of a collective, blocking or asynchronous: the rounds
/// of the step's plan from `round` on, waiting for the round's sends and
/// messages.
struct CollectiveRun : Waits {
  /// The device, or -1 while the run is free.
  int64_t device = -1;
  uint32_t step = 0;
  uint32_t round = 0;
  /// The device's next run.
  uint32_t next = kNoRun;
  /// Holds one of the device's DMA slots.
  bool async = false;
  /// When it was launched (for the trace).
  double launched = 0;
};

/// One route's part of a point-to-point transfer; the parts of one
/// transfer share a TransferGroup.
struct Transfer {
  /// Played devices: the sender and the receiver's representative.
  int64_t src = 0;
  int64_t dst = 0;
  /// The receiver, a logical device (for the trace).
  int64_t target = 0;
  /// Keys completed at the sender (async sends only) and the receiver.
  uint64_t sendKey = 0;
  uint64_t recvKey = 0;
  double bytes = 0;
  double remaining = 0;
  double rate = 0;
  double lastUpdate = 0;
  double fluidStart = -1;
  uint32_t version = 0;
  uint32_t group = 0;
  /// A send of a collective run's round, completing at the sender there.
  uint32_t run = kNoRun;
  /// For the trace: the op that sent it and when (a permute's span runs
  /// from its issue to its arrival).
  uint32_t label = 0;
  double issued = 0;
  bool blocking = false;
  /// On its links (the fluid phase).
  bool fluid = false;
  /// In Simulation::dirty: its rate is due when the instant is over.
  bool dirty = false;
  /// The route, a used link class (Simulation::linkClasses) per link.
  llvm::SmallVector<int64_t, 6> links;
  /// With a trace, the route's physical links, of which `links` holds the
  /// classes: the trace names the devices a link class's spans stand for.
  std::vector<int64_t> physicalLinks;
};

/// Resume ends a compute step, Launch ends a collective run's launch
/// overhead (id: the run); Dropped is a finish whose transfer lost its
/// bandwidth.
enum class EventKind : uint8_t { Resume, Launch, FluidStart, Finish, Dropped };

struct Event {
  double time;
  uint64_t seq;
  uint32_t id;
  uint32_t version;
  EventKind kind;
};

struct Later {
  bool operator()(const Event &a, const Event &b) const {
    if (a.time != b.time)
      return a.time > b.time;
    return a.seq > b.seq;
  }
};

constexpr uint32_t kNotQueued = ~uint32_t(0);

/// Keeps, per transfer, where the queue moves its finish event (a
/// transfer has at most one).
struct FinishPlaced {
  std::vector<uint32_t> *finishAt;
  void operator()(const Event &event, size_t at) const {
    if (event.kind == EventKind::Finish)
      (*finishAt)[event.id] = static_cast<uint32_t>(at);
  }
};

/// Per-op exposed time: for every device when that fits in memory, else
/// only for one chosen device (and the simulation runs twice).
constexpr uint64_t kMaxPerDeviceStats = uint64_t(1) << 22;
constexpr size_t kMaxCachedRoutes = size_t(1) << 20;
constexpr uint64_t kNoKey = ~uint64_t(0);

class Simulation {
public:
  /// `statsDevice`: the logical device whose per-op waits to keep when
  /// they do not fit for every played device (-1: every one).
  Simulation(const SimProgram &program, const MachineModel &machine,
             const SimOptions &options, int64_t statsDevice,
             detail::TraceRecord *trace)
      : program(program), machine(machine), hw(machine.hardware),
        topology(machine.topology), assignment(machine.assignment),
        options(options), statsDevice(statsDevice), trace(trace),
        queue(FinishPlaced{&finishAt}) {}

  llvm::Error prepare();
  llvm::Error run();
  SimReport makeReport() const;
  bool hasPerDeviceStats() const { return perDeviceStats; }
  /// The symmetry played; valid after prepare().
  const DeviceSymmetry &getSymmetry() const { return *symmetry; }

private:
  // Preparation.
  llvm::Error stepError(size_t index, const llvm::Twine &message) const;
  /// The view of the group along `axes`, one per distinct axes.
  uint32_t getView(llvm::ArrayRef<int16_t> axes);
  llvm::Error prepareSteps();
  llvm::Error prepareCollective(size_t index, StepInfo &info);
  llvm::Error preparePermute(size_t index, StepInfo &info);
  /// The symmetry to play: none when asked for brute force or for a trace
  /// of every device (which names the devices of every transfer), else
  /// the one of the program.
  DeviceSymmetry findSymmetry() const;

  /// The played device that finishes last, the first one on a tie (whose
  /// logical device is the lowest-numbered one); valid after run().
  int64_t criticalPlayed() const;

  // Played devices: one per orbit of the symmetry.
  int64_t logicalOf(int64_t d) const { return symmetry->representative(d); }
  int64_t playedOf(int64_t logical) const { return symmetry->orbitOf(logical); }

  // Keys of messages: slot, played device, and whether it is the sender's
  // side.
  uint64_t recvKey(uint64_t slot, int64_t device) const {
    return (slot * numPlayed + device) * 2;
  }
  uint64_t sendKey(uint64_t slot, int64_t device) const {
    return (slot * numPlayed + device) * 2 + 1;
  }
  /// Delivered to `device` when its part of the collective at step `index`
  /// is done.
  uint64_t doneKey(size_t index, int64_t device) const {
    return recvKey(infos[index].slotBase, device);
  }

  // Events.
  void push(double time, EventKind kind, uint32_t id, uint32_t version = 0) {
    queue.push(Event{time, nextSeq++, id, version, kind});
  }
  /// Schedules transfer `id`'s finish at `time`, in place of its pending
  /// one if it has one.
  void pushFinish(double time, uint32_t id);
  /// Turns transfer `id`'s pending finish, if any, into a dropped event.
  void dropFinish(uint32_t id);

  // Devices.
  void advance(int64_t d, double now);
  void startPermuteSend(int64_t d, double now);
  /// A transfer of `d` holding a DMA slot is through: the slot frees (to
  /// the start the device may be stuck at) and `key` goes to its done.
  void releaseSlot(int64_t d, uint64_t key, double now);
  void expectKey(Waits &waits, uint64_t key);
  void deliverKey(int64_t d, uint64_t key, double now);
  void satisfied(int64_t d, double now);
  void finishStep(int64_t d, double now);
  void beginComm(Device &dev, double now);
  void endComm(Device &dev, double now);
  /// Closes the device's communication at the end of its program.
  void finishComm(Device &dev, double now);
  void addExposed(int64_t d, uint32_t label, double begin, double now);
  /// Whom played device `d` sends to and receives from in permute `index`,
  /// as logical devices (-1 for nobody, or for itself).
  std::pair<int64_t, int64_t> permutePeers(int64_t d, size_t index) const;

  // Collective runs.
  void launchCollective(int64_t d, uint32_t step, bool async, double now);
  /// Plays the run's rounds from its current one until one has to wait.
  void playRounds(uint32_t id, double now);
  void runSatisfied(uint32_t id, double now);
  /// The run's last round is through: it frees and tells its device.
  void finishRun(uint32_t id, double now);

  // Transfers.
  /// Played device `src` sends `bytes` to logical device `target` on
  /// message slot `slot`.
  void startTransfer(int64_t src, int64_t target, double bytes, uint64_t slot,
                     bool blocking, uint32_t run, double delay,
                     bool tiesNegative, double now);
  /// The routes from physical device `src` to `dst` (Topology::routes) as
  /// link classes: spans of routeLinks, routeSpans[first, second).
  std::pair<uint32_t, uint32_t> routesBetween(int64_t src, int64_t dst,
                                              bool tiesNegative);
  void enterFluid(uint32_t id, double now);
  void finishFluid(uint32_t id, double now);
  void completeTransfer(uint32_t id, double now);
  /// `id` enters or leaves its links at `now`: the transfers sharing them
  /// have moved their bytes at their old rates until now, and get new ones
  /// when the instant is over.
  void touchLinks(uint32_t id, double now);
  void markDirty(uint32_t id);
  /// The instant `now` is over: every marked transfer on its links gets
  /// the rate of its links' final counts and, if that changed, a new
  /// finish event.
  void settleRates(double now);
  double rateOf(const Transfer &t) const;

  const SimProgram &program;
  const MachineModel &machine;
  const HardwareDescription &hw;
  const Topology &topology;
  const DeviceAssignment &assignment;
  const SimOptions &options;
  int64_t statsDevice;
  detail::TraceRecord *trace;

  int64_t numDevices = 0;
  uint32_t maxInFlight = 0;
  double linkBandwidth = 0;
  std::vector<StepInfo> infos;
  std::vector<GroupView> views;
  std::map<llvm::SmallVector<int16_t, 2>, uint32_t> viewOf;
  std::vector<RoundSend> roundSends;
  std::vector<Round> rounds;
  std::vector<PermuteTable> permutes;
  /// Permute tables by (view, pairs): programs repeat their permutes.
  std::map<std::pair<uint32_t, llvm::ArrayRef<std::pair<int64_t, int64_t>>>,
           uint32_t, PairsLess>
      permuteOf;
  /// Rounds by (kind, bytes, axes, direction) of the collective.
  std::map<std::tuple<CollectiveKind, double, llvm::SmallVector<int16_t, 2>,
                      RingDirection>,
           std::pair<uint32_t, uint32_t>>
      roundsOf;

  std::optional<DeviceSymmetry> symmetry;
  int64_t numPlayed = 0;
  std::vector<Device> devices;
  std::vector<CollectiveRun> runs;
  std::vector<uint32_t> freeRuns;
  std::vector<Transfer> transfers;
  /// Per transfer, where its finish event is in the queue, or kNotQueued.
  std::vector<uint32_t> finishAt;
  std::vector<uint32_t> freeTransfers;
  /// Per transfer group, its parts still moving.
  std::vector<uint32_t> groupParts;
  std::vector<uint32_t> freeGroups;
  /// Routes by (source, target, ties), computed once: a device sends to
  /// the same few peers all program long. Cleared when it holds
  /// kMaxCachedRoutes, which only a brute-force run of a huge machine
  /// reaches.
  llvm::DenseMap<uint64_t, std::pair<uint32_t, uint32_t>> routeCache;
  std::vector<std::pair<uint32_t, uint32_t>> routeSpans;
  std::vector<int64_t> routeLinks;
  /// With a trace, the physical link of each of routeLinks.
  std::vector<int64_t> routePhysicalLinks;
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 3> routeScratch;
  /// With more than kDenseLinkClasses link classes
  /// (DeviceSymmetry::linkClassOf), those the routes use, in the order they
  /// first did, and their index there: a few devices of a large topology
  /// use few of its links, and a simulation of the gate's must not set up
  /// all of them (an 8-device program on 64x64x64 has 1.5 million). With
  /// fewer, a class is its own index.
  bool denseLinks = true;
  std::vector<int64_t> linkClasses;
  llvm::DenseMap<int64_t, uint32_t> usedLinkOf;
  static constexpr int64_t kDenseLinkClasses = int64_t(1) << 16;
  /// The index of link class `linkClass` in linkActive, and back.
  uint32_t useLinkClass(int64_t linkClass);
  int64_t linkClassAt(uint32_t used) const {
    return denseLinks ? used : linkClasses[used];
  }
  /// The fluid transfers on each used link class, a transfer once per link
  /// of its route in the class.
  std::vector<llvm::SmallVector<uint32_t, 2>> linkActive;
  /// Transfers whose rate is due at the end of the instant.
  std::vector<uint32_t> dirty;
  llvm::DenseSet<uint64_t> completed;
  overlap::DaryHeap<Event, Later, FinishPlaced> queue;
  uint64_t nextSeq = 0;
  /// Events popped, and finish events replaced in the queue (each counts as
  /// the superseded event it replaces would have when popped).
  int64_t events = 0;

  /// Exposed seconds by (played device, label), or of statsDevice (played
  /// as statsPlayed) by label.
  int64_t statsPlayed = -1;
  bool perDeviceStats = false;
  std::vector<double> perDevice;
  std::vector<double> perLabel;
};

} // namespace

//===----------------------------------------------------------------------===//
// Preparation
//===----------------------------------------------------------------------===//

llvm::Error Simulation::stepError(size_t index,
                                  const llvm::Twine &message) const {
  const SimStep &step = program.steps[index];
  std::string label = step.label < program.labels.size()
                          ? " '" + program.labels[step.label] + "'"
                          : "";
  return makeError(llvm::formatv("step {0} ({1}{2}): ", index,
                                 stringifyStepKind(step.kind), label)
                       .str() +
                   message);
}

uint32_t Simulation::getView(llvm::ArrayRef<int16_t> axes) {
  auto [it, inserted] = viewOf.try_emplace(
      llvm::SmallVector<int16_t, 2>(axes.begin(), axes.end()), views.size());
  if (inserted)
    views.emplace_back(assignment.getGridShape(), axes);
  return it->second;
}

static std::string describeAxes(llvm::ArrayRef<int16_t> axes) {
  std::string result = "[";
  for (auto [i, axis] : llvm::enumerate(axes))
    result += (i ? ", " : "") + std::to_string(axis);
  return result + "]";
}

llvm::Error Simulation::prepareCollective(size_t index, StepInfo &info) {
  const SimStep &step = program.steps[index];
  // Programs repeat their collectives (every layer has the same ones):
  // one plan, and one list of rounds, serves them all, since a round's
  // message slots are relative to its step's.
  auto key =
      std::make_tuple(step.collective, step.bytes,
                      llvm::SmallVector<int16_t, 2>(step.axes), step.direction);
  auto [known, inserted] = roundsOf.try_emplace(key, 0, 0);
  if (!inserted) {
    std::tie(info.roundsBegin, info.roundsEnd) = known->second;
    return llvm::Error::success();
  }
  const CollectivePlan &plan = machine.planCollective(
      step.collective, step.bytes, step.axes, step.direction);
  info.roundsBegin = rounds.size();
  uint64_t slot = 1;
  for (const CollectiveRound &round : plan.rounds) {
    if (round.sends.size() > kMaxExpect)
      return stepError(index, "a collective round with more sends than the "
                              "simulator tracks");
    Round played{static_cast<uint32_t>(roundSends.size()), 0, slot};
    for (const CollectiveSend &send : round.sends)
      roundSends.push_back(
          RoundSend{getView(send.axes), send.shift, send.wraps, send.bytes});
    played.sendsEnd = roundSends.size();
    slot += round.sends.size();
    rounds.push_back(played);
  }
  info.roundsEnd = rounds.size();
  known->second = {info.roundsBegin, info.roundsEnd};
  return llvm::Error::success();
}

llvm::Error Simulation::preparePermute(size_t index, StepInfo &info) {
  const SimStep &step = program.steps[index];
  if (step.pairs >= program.pairLists.size())
    return stepError(index,
                     llvm::formatv("pair list {0} does not exist; the "
                                   "program has {1}",
                                   step.pairs, program.pairLists.size()));
  info.view = getView(step.axes);
  auto [known, inserted] = permuteOf.try_emplace(
      std::make_pair(info.view, llvm::ArrayRef(program.pairLists[step.pairs])),
      permutes.size());
  info.permute = known->second;
  if (!inserted)
    return llvm::Error::success();
  int64_t size = views[info.view].size;
  PermuteTable table;
  table.view = info.view;
  table.targetOf.assign(size, -1);
  table.sourceOf.assign(size, -1);
  for (auto [source, target] : program.pairLists[step.pairs]) {
    if (source < 0 || source >= size || target < 0 || target >= size)
      return stepError(
          index, llvm::formatv("permute pair ({0}, {1}) is outside the group "
                               "of {2} devices along axes {3}",
                               source, target, size, describeAxes(step.axes)));
    if (table.targetOf[source] >= 0)
      return stepError(index, llvm::formatv("group index {0} is the source of "
                                            "more than one permute pair",
                                            source));
    if (table.sourceOf[target] >= 0)
      return stepError(index, llvm::formatv("group index {0} is the target of "
                                            "more than one permute pair",
                                            target));
    table.targetOf[source] = target;
    table.sourceOf[target] = source;
  }
  permutes.push_back(std::move(table));
  return llvm::Error::success();
}

llvm::Error Simulation::prepareSteps() {
  if (program.gridShape.size() != assignment.getGridShape().size() ||
      !llvm::equal(program.gridShape, assignment.getGridShape()))
    return makeError("the program's grid shape does not match the device "
                     "assignment's");
  maxInFlight = options.maxInFlight ? options.maxInFlight : hw.dmaSlots;
  if (maxInFlight == 0)
    return makeError("no DMA slots: hardware " + hw.name +
                     " has dmaSlots = 0 and no maxInFlight was given");
  linkBandwidth = topology.getKind() == InterconnectKind::Switch
                      ? hw.egressBandwidth()
                      : hw.linkBandwidth;
  if (program.steps.size() >= std::numeric_limits<uint32_t>::max())
    return makeError("program has too many steps");

  infos.resize(program.steps.size());
  std::vector<bool> doneSeen(program.steps.size(), false);
  uint64_t slots = 0;
  int64_t rank = assignment.getGridShape().size();
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const SimStep &step = program.steps[i];
    StepInfo &info = infos[i];
    if (step.label >= program.labels.size())
      return stepError(i, llvm::formatv("label {0} does not exist; the "
                                        "program has {1}",
                                        step.label, program.labels.size()));
    if (!(step.seconds >= 0) || !(step.flops >= 0) || !(step.bytes >= 0))
      return stepError(i, "negative or NaN seconds, flops or bytes");
    if (step.kind == SimStep::Kind::Collective ||
        step.kind == SimStep::Kind::CollectiveStart ||
        step.kind == SimStep::Kind::Permute ||
        step.kind == SimStep::Kind::PermuteStart) {
      for (auto [j, axis] : llvm::enumerate(step.axes)) {
        if (axis < 0 || axis >= rank)
          return stepError(i, llvm::formatv("axis {0} is outside the grid of "
                                            "rank {1}",
                                            axis, rank));
        if (llvm::is_contained(llvm::ArrayRef(step.axes).take_front(j), axis))
          return stepError(i, llvm::formatv("axis {0} is listed twice", axis));
      }
    }
    info.slotBase = slots;
    switch (step.kind) {
    case SimStep::Kind::Compute:
      break;
    case SimStep::Kind::Collective:
    case SimStep::Kind::CollectiveStart: {
      if (llvm::Error err = prepareCollective(i, info))
        return err;
      // The done key's slot, then the rounds'.
      slots += 1;
      for (uint32_t r = info.roundsBegin; r < info.roundsEnd; ++r)
        slots += rounds[r].sendsEnd - rounds[r].sendsBegin;
      break;
    }
    case SimStep::Kind::Permute:
    case SimStep::Kind::PermuteStart:
      if (llvm::Error err = preparePermute(i, info))
        return err;
      slots += 1;
      break;
    case SimStep::Kind::PermuteDone:
    case SimStep::Kind::CollectiveDone: {
      SimStep::Kind startKind = step.kind == SimStep::Kind::PermuteDone
                                    ? SimStep::Kind::PermuteStart
                                    : SimStep::Kind::CollectiveStart;
      if (step.start >= i)
        return stepError(i, llvm::formatv("waits for step {0}, which does not "
                                          "come before it",
                                          step.start));
      if (program.steps[step.start].kind != startKind)
        return stepError(
            i, llvm::formatv("waits for step {0}, which is a {1} rather than "
                             "a {2}",
                             step.start,
                             stringifyStepKind(program.steps[step.start].kind),
                             stringifyStepKind(startKind)));
      if (doneSeen[step.start])
        return stepError(
            i, llvm::formatv("waits for step {0} a second time", step.start));
      doneSeen[step.start] = true;
      break;
    }
    }
  }
  // A collective's result exists only at its done: as in the runtime, one
  // started and never waited for is a broken program.
  for (size_t i = 0; i < program.steps.size(); ++i)
    if (program.steps[i].kind == SimStep::Kind::CollectiveStart && !doneSeen[i])
      return stepError(i, "no collective-done waits for it");
  // Keys pack (slot, device, side) into 64 bits below DenseSet's reserved
  // values.
  if (slots != 0 &&
      slots > (std::numeric_limits<uint64_t>::max() / 4) / numDevices)
    return makeError("program has too many messages to simulate");
  return llvm::Error::success();
}

DeviceSymmetry Simulation::findSymmetry() const {
  if (options.bruteForce)
    return DeviceSymmetry::none(topology, assignment, "asked for");
  if (trace && options.traceDevices.empty())
    return DeviceSymmetry::none(topology, assignment,
                                "the trace shows every device");
  std::set<CommPattern> distinct;
  for (const RoundSend &send : roundSends)
    distinct.insert(CommPattern{send.view, 0, send.shift, send.wraps,
                                /*isPermute=*/false});
  for (auto [i, table] : llvm::enumerate(permutes))
    distinct.insert(CommPattern{table.view, static_cast<uint32_t>(i), 0,
                                /*wraps=*/false, /*isPermute=*/true});
  std::vector<CommPattern> patterns(distinct.begin(), distinct.end());
  return DeviceSymmetry::find(
      topology, assignment, patterns.size(),
      [&](size_t index, int64_t logical) {
        const CommPattern &pattern = patterns[index];
        const GroupView &view = views[pattern.view];
        if (pattern.isPermute)
          return permutePeer(view, permutes[pattern.permute], logical,
                             /*bySource=*/false);
        return ringPeer(view, pattern.wraps, logical, pattern.shift);
      });
}

llvm::Error Simulation::prepare() {
  numDevices = assignment.getNumLogicalDevices();
  if (llvm::Error err = prepareSteps())
    return err;
  symmetry.emplace(findSymmetry());
  numPlayed = symmetry->getNumOrbits();
  // The work, once the devices played are known: each step plays on each
  // of them, a collective as the rounds of its ring (an all_reduce on 2^20
  // devices is one step of two million rounds).
  int64_t rounds = 0;
  for (const StepInfo &info : infos)
    rounds += std::max<int64_t>(1, info.roundsEnd - info.roundsBegin);
  if (rounds > 0 && numPlayed > kMaxSimulatedDeviceSteps / rounds)
    return makeError(llvm::formatv(
        "the simulation would play {0} rounds (each step once, each "
        "collective as the rounds of its ring) on each of {1} devices played "
        "({2}), more than {3} device-rounds",
        rounds, numPlayed, symmetry->describe(), kMaxSimulatedDeviceSteps));
  if (statsDevice >= 0)
    statsPlayed = playedOf(statsDevice);
  devices.assign(numPlayed, Device());
  denseLinks = symmetry->getNumLinkClasses() <= kDenseLinkClasses;
  if (denseLinks)
    linkActive.resize(symmetry->getNumLinkClasses());
  if (trace) {
    std::vector<int64_t> traced = options.traceDevices;
    if (traced.empty())
      for (int64_t d = 0; d < numDevices; ++d)
        traced.push_back(d);
    trace->playedTraced.assign(numPlayed, false);
    for (int64_t logical : traced)
      trace->playedTraced[playedOf(logical)] = true;
    trace->linkClassTraced.assign(symmetry->getNumLinkClasses(), false);
    for (int64_t link : detail::linksOfDevices(topology, assignment, traced))
      trace->linkClassTraced[symmetry->linkClassOf(link)] = true;
  }
  size_t numLabels = program.labels.size();
  if (statsDevice < 0 &&
      static_cast<uint64_t>(numPlayed) * numLabels <= kMaxPerDeviceStats) {
    perDeviceStats = true;
    perDevice.assign(numPlayed * numLabels, 0);
  } else {
    perLabel.assign(numLabels, 0);
  }
  transfers.reserve(std::min<int64_t>(4 * numPlayed, 1 << 20));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

void Simulation::addExposed(int64_t d, uint32_t label, double begin,
                            double now) {
  double seconds = now - begin;
  if (perDeviceStats)
    perDevice[d * program.labels.size() + label] += seconds;
  else if (d == statsPlayed)
    perLabel[label] += seconds;
  if (trace && seconds > 0 && trace->playedTraced[d])
    trace->waits.push_back({d, label, begin, seconds});
}

std::pair<int64_t, int64_t> Simulation::permutePeers(int64_t d,
                                                     size_t index) const {
  const StepInfo &info = infos[index];
  const GroupView &view = views[info.view];
  const PermuteTable &table = permutes[info.permute];
  int64_t self = logicalOf(d);
  int64_t target = permutePeer(view, table, self, /*bySource=*/false);
  int64_t source = permutePeer(view, table, self, /*bySource=*/true);
  return {target != self ? target : -1, source != self ? source : -1};
}

void Simulation::expectKey(Waits &waits, uint64_t key) {
  // A message that arrived before its receiver got here is waiting in
  // `completed`.
  if (completed.erase(key))
    return;
  assert(waits.numExpect < kMaxExpect && "waiting for too many keys");
  waits.expect[waits.numExpect++] = key;
  ++waits.pending;
}

/// Takes `key` from those `waits` waits for; false if it is not one.
static bool take(Waits &waits, uint64_t key) {
  for (uint32_t i = 0; i < waits.numExpect; ++i) {
    if (waits.expect[i] != key)
      continue;
    waits.expect[i] = kNoKey;
    return true;
  }
  return false;
}

void Simulation::deliverKey(int64_t d, uint64_t key, double now) {
  Device &dev = devices[d];
  if (take(dev, key)) {
    if (--dev.pending == 0)
      satisfied(d, now);
    return;
  }
  for (uint32_t id = dev.firstRun; id != kNoRun; id = runs[id].next) {
    if (!take(runs[id], key))
      continue;
    if (--runs[id].pending == 0)
      runSatisfied(id, now);
    return;
  }
  completed.insert(key);
}

void Simulation::advance(int64_t d, double now) {
  Device &dev = devices[d];
  dev.state = DeviceState::Running;
  while (dev.pc < program.steps.size()) {
    const SimStep &step = program.steps[dev.pc];
    const StepInfo &info = infos[dev.pc];
    switch (step.kind) {
    case SimStep::Kind::Compute:
      if (step.seconds > 0) {
        dev.computeTime += step.seconds;
        if (trace && trace->playedTraced[d])
          trace->compute.push_back({d, step.label, now, step.seconds});
        dev.state = DeviceState::Computing;
        push(now + step.seconds, EventKind::Resume, d);
        return;
      }
      break;

    case SimStep::Kind::Collective:
      // A group of one device costs nothing, launch included.
      if (info.roundsBegin == info.roundsEnd)
        break;
      beginComm(dev, now);
      dev.opBegin = now;
      dev.pending = 0;
      dev.numExpect = 0;
      expectKey(dev, doneKey(dev.pc, d));
      dev.state = DeviceState::Collective;
      launchCollective(d, dev.pc, /*async=*/false, now);
      return;

    case SimStep::Kind::CollectiveStart:
      if (info.roundsBegin == info.roundsEnd)
        break;
      beginComm(dev, now);
      if (dev.inFlight >= static_cast<int32_t>(maxInFlight)) {
        dev.opBegin = now;
        dev.state = DeviceState::Slot;
        return;
      }
      launchCollective(d, dev.pc, /*async=*/true, now);
      break;

    case SimStep::Kind::CollectiveDone:
      if (infos[step.start].roundsBegin == infos[step.start].roundsEnd)
        break;
      dev.pending = 0;
      dev.numExpect = 0;
      expectKey(dev, doneKey(step.start, d));
      if (dev.pending == 0) {
        endComm(dev, now);
        break;
      }
      dev.opBegin = now;
      dev.state = DeviceState::Done;
      return;

    case SimStep::Kind::Permute: {
      auto [target, source] = permutePeers(d, dev.pc);
      if (target < 0 && source < 0)
        break;
      beginComm(dev, now);
      dev.opBegin = now;
      dev.pending = 0;
      dev.numExpect = 0;
      if (target >= 0) {
        startTransfer(d, target, step.bytes, info.slotBase,
                      /*blocking=*/true, kNoRun, hw.collectiveLaunchOverhead,
                      /*tiesNegative=*/false, now);
        ++dev.pending;
      }
      if (source >= 0)
        expectKey(dev, recvKey(info.slotBase, d));
      if (dev.pending == 0) {
        endComm(dev, now);
        break;
      }
      dev.state = DeviceState::Permute;
      return;
    }

    case SimStep::Kind::PermuteStart: {
      auto [target, source] = permutePeers(d, dev.pc);
      if (target < 0 && source < 0)
        break;
      beginComm(dev, now);
      if (target < 0)
        break;
      if (dev.inFlight >= static_cast<int32_t>(maxInFlight)) {
        dev.opBegin = now;
        dev.state = DeviceState::Slot;
        return;
      }
      startPermuteSend(d, now);
      break;
    }

    case SimStep::Kind::PermuteDone: {
      auto [target, source] = permutePeers(d, step.start);
      if (target < 0 && source < 0)
        break;
      uint64_t slot = infos[step.start].slotBase;
      dev.pending = 0;
      dev.numExpect = 0;
      if (target >= 0)
        expectKey(dev, sendKey(slot, d));
      if (source >= 0)
        expectKey(dev, recvKey(slot, d));
      if (dev.pending == 0) {
        endComm(dev, now);
        break;
      }
      dev.opBegin = now;
      dev.state = DeviceState::Done;
      return;
    }
    }
    ++dev.pc;
  }
  dev.state = DeviceState::Finished;
  dev.finish = now;
  finishComm(dev, now);
}

void Simulation::beginComm(Device &dev, double now) {
  if (dev.commDepth++ > 0)
    return;
  // An interval that ended at this very time goes on, so that the sum does
  // not depend on whether the end or this start was played first.
  if (dev.commPending && dev.commEnd == now) {
    dev.commPending = false;
    return;
  }
  if (dev.commPending)
    dev.commTime += dev.commEnd - dev.commStart;
  dev.commPending = false;
  dev.commStart = now;
}

void Simulation::endComm(Device &dev, double now) {
  if (--dev.commDepth > 0)
    return;
  dev.commEnd = now;
  dev.commPending = true;
}

void Simulation::finishComm(Device &dev, double now) {
  // Transfers started and never waited for count until the end.
  if (dev.commDepth > 0)
    dev.commTime += now - dev.commStart;
  else if (dev.commPending)
    dev.commTime += dev.commEnd - dev.commStart;
  dev.commDepth = 0;
  dev.commPending = false;
}

void Simulation::startPermuteSend(int64_t d, double now) {
  Device &dev = devices[d];
  const SimStep &step = program.steps[dev.pc];
  uint64_t slot = infos[dev.pc].slotBase;
  int64_t target = permutePeers(d, dev.pc).first;
  ++dev.inFlight;
  startTransfer(d, target, step.bytes, slot, /*blocking=*/false, kNoRun,
                hw.collectiveLaunchOverhead, /*tiesNegative=*/false, now);
}

void Simulation::releaseSlot(int64_t d, uint64_t key, double now) {
  Device &dev = devices[d];
  --dev.inFlight;
  if (dev.state != DeviceState::Slot) {
    deliverKey(d, key, now);
    return;
  }
  // The freed slot goes to the start the device is stuck at; the key waits
  // for its done.
  completed.insert(key);
  addExposed(d, program.steps[dev.pc].label, dev.opBegin, now);
  dev.state = DeviceState::Running;
  if (program.steps[dev.pc].kind == SimStep::Kind::PermuteStart)
    startPermuteSend(d, now);
  else
    launchCollective(d, dev.pc, /*async=*/true, now);
  ++dev.pc;
  advance(d, now);
}

/// The current step of `d` ends at `now`: account its wait and go on.
void Simulation::finishStep(int64_t d, double now) {
  Device &dev = devices[d];
  addExposed(d, program.steps[dev.pc].label, dev.opBegin, now);
  ++dev.pc;
  advance(d, now);
}

void Simulation::satisfied(int64_t d, double now) {
  Device &dev = devices[d];
  dev.numExpect = 0;
  assert((dev.state == DeviceState::Collective ||
          dev.state == DeviceState::Permute ||
          dev.state == DeviceState::Done) &&
         "device satisfied while not waiting");
  endComm(dev, now);
  finishStep(d, now);
}

//===----------------------------------------------------------------------===//
// Collective runs
//===----------------------------------------------------------------------===//

void Simulation::launchCollective(int64_t d, uint32_t step, bool async,
                                  double now) {
  uint32_t id;
  if (!freeRuns.empty()) {
    id = freeRuns.back();
    freeRuns.pop_back();
  } else {
    id = runs.size();
    runs.emplace_back();
  }
  Device &dev = devices[d];
  CollectiveRun &run = runs[id];
  run.device = d;
  run.step = step;
  run.round = infos[step].roundsBegin;
  run.async = async;
  run.launched = now;
  run.next = dev.firstRun;
  dev.firstRun = id;
  if (async)
    ++dev.inFlight;
  push(now + hw.collectiveLaunchOverhead, EventKind::Launch, id);
}

void Simulation::playRounds(uint32_t id, double now) {
  CollectiveRun &run = runs[id];
  int64_t d = run.device;
  const StepInfo &info = infos[run.step];
  // A round in which the device neither sends nor receives (an end of a
  // line) passes at once.
  while (true) {
    const Round &round = rounds[run.round];
    run.pending = 0;
    run.numExpect = 0;
    for (uint32_t i = round.sendsBegin; i < round.sendsEnd; ++i) {
      const RoundSend &send = roundSends[i];
      const GroupView &view = views[send.view];
      int64_t self = logicalOf(d);
      uint64_t slot = info.slotBase + round.slotOffset + (i - round.sendsBegin);
      int64_t target = ringPeer(view, send.wraps, self, send.shift);
      if (target >= 0 && target != self) {
        startTransfer(d, target, send.bytes, slot, /*blocking=*/true, id, 0,
                      /*tiesNegative=*/send.shift < 0, now);
        ++run.pending;
      }
      int64_t source = ringPeer(view, send.wraps, self, -send.shift);
      if (source >= 0 && source != self)
        expectKey(run, recvKey(slot, d));
    }
    if (run.pending > 0)
      return;
    if (++run.round == info.roundsEnd) {
      finishRun(id, now);
      return;
    }
  }
}

void Simulation::runSatisfied(uint32_t id, double now) {
  CollectiveRun &run = runs[id];
  if (++run.round == infos[run.step].roundsEnd)
    finishRun(id, now);
  else
    playRounds(id, now);
}

void Simulation::finishRun(uint32_t id, double now) {
  CollectiveRun &run = runs[id];
  int64_t d = run.device;
  uint64_t key = doneKey(run.step, d);
  bool async = run.async;
  if (trace && trace->playedTraced[d])
    trace->comm.push_back({d, program.steps[run.step].label,
                           /*permute=*/false, run.launched,
                           now - run.launched});
  uint32_t *link = &devices[d].firstRun;
  while (*link != id)
    link = &runs[*link].next;
  *link = run.next;
  run.device = -1;
  freeRuns.push_back(id);
  // The device may go on and launch runs, which can move `runs`.
  if (async)
    releaseSlot(d, key, now);
  else
    deliverKey(d, key, now);
}

//===----------------------------------------------------------------------===//
// Transfers
//===----------------------------------------------------------------------===//

void Simulation::startTransfer(int64_t src, int64_t target, double bytes,
                               uint64_t slot, bool blocking, uint32_t run,
                               double delay, bool tiesNegative, double now) {
  uint32_t group;
  if (!freeGroups.empty()) {
    group = freeGroups.back();
    freeGroups.pop_back();
  } else {
    group = groupParts.size();
    groupParts.push_back(0);
  }
  int64_t dst = playedOf(target);
  auto [spansBegin, spansEnd] =
      routesBetween(assignment.physical(logicalOf(src)),
                    assignment.physical(target), tiesNegative);
  groupParts[group] = spansEnd - spansBegin;
  double part = bytes / static_cast<double>(spansEnd - spansBegin);
  for (uint32_t span = spansBegin; span < spansEnd; ++span) {
    uint32_t id;
    if (!freeTransfers.empty()) {
      id = freeTransfers.back();
      freeTransfers.pop_back();
    } else {
      id = transfers.size();
      transfers.emplace_back();
      finishAt.push_back(kNotQueued);
    }
    Transfer &t = transfers[id];
    t.src = src;
    t.dst = dst;
    t.target = target;
    t.sendKey = sendKey(slot, src);
    t.recvKey = recvKey(slot, dst);
    t.bytes = t.remaining = part;
    t.rate = 0;
    t.fluidStart = -1;
    t.blocking = blocking;
    t.run = run;
    // A permute is sent at the device's current step.
    t.label =
        program.steps[run != kNoRun ? runs[run].step : devices[src].pc].label;
    t.issued = now;
    t.group = group;
    t.fluid = false;
    t.dirty = false;
    ++t.version;
    auto [linksBegin, linksEnd] = routeSpans[span];
    t.links.assign(routeLinks.begin() + linksBegin,
                   routeLinks.begin() + linksEnd);
    if (trace)
      t.physicalLinks.assign(routePhysicalLinks.begin() + linksBegin,
                             routePhysicalLinks.begin() + linksEnd);
    int64_t hops = topology.getKind() == InterconnectKind::Switch
                       ? 1
                       : static_cast<int64_t>(t.links.size());
    devices[src].sentUnits +=
        static_cast<unsigned __int128>(part * hops * kSentUnitsPerByte);
    push(now + delay + hops * hw.hopLatency, EventKind::FluidStart, id,
         t.version);
  }
}

std::pair<uint32_t, uint32_t>
Simulation::routesBetween(int64_t src, int64_t dst, bool tiesNegative) {
  uint64_t key =
      (static_cast<uint64_t>(src) * topology.getNumDevices() + dst) * 2 +
      (tiesNegative ? 1 : 0);
  auto it = routeCache.find(key);
  if (it != routeCache.end())
    return it->second;
  if (routeCache.size() >= kMaxCachedRoutes) {
    routeCache.clear();
    routeSpans.clear();
    routeLinks.clear();
    routePhysicalLinks.clear();
  }
  topology.routes(src, dst, routeScratch, tiesNegative);
  uint32_t begin = routeSpans.size();
  for (const llvm::SmallVector<int64_t, 8> &route : routeScratch) {
    uint32_t linksBegin = routeLinks.size();
    for (int64_t link : route) {
      routeLinks.push_back(useLinkClass(symmetry->linkClassOf(link)));
      if (trace)
        routePhysicalLinks.push_back(link);
    }
    routeSpans.push_back(
        {linksBegin, static_cast<uint32_t>(routeLinks.size())});
  }
  std::pair<uint32_t, uint32_t> spans(begin, routeSpans.size());
  routeCache.try_emplace(key, spans);
  return spans;
}

uint32_t Simulation::useLinkClass(int64_t linkClass) {
  if (denseLinks)
    return linkClass;
  auto [used, added] = usedLinkOf.try_emplace(linkClass, linkClasses.size());
  if (added) {
    linkClasses.push_back(linkClass);
    linkActive.emplace_back();
  }
  return used->second;
}

double Simulation::rateOf(const Transfer &t) const {
  double rate = std::numeric_limits<double>::infinity();
  for (int64_t link : t.links)
    rate = std::min(rate, linkBandwidth / linkActive[link].size());
  return rate;
}

void Simulation::markDirty(uint32_t id) {
  Transfer &t = transfers[id];
  if (t.dirty)
    return;
  t.dirty = true;
  dirty.push_back(id);
}

void Simulation::touchLinks(uint32_t id, double now) {
  for (int64_t link : transfers[id].links)
    for (uint32_t other : linkActive[link]) {
      if (other == id)
        continue;
      // Settling twice in one instant subtracts nothing the second time.
      Transfer &t = transfers[other];
      t.remaining = std::max(0.0, t.remaining - t.rate * (now - t.lastUpdate));
      t.lastUpdate = now;
      markDirty(other);
    }
}

void Simulation::settleRates(double now) {
  for (uint32_t id : dirty) {
    Transfer &t = transfers[id];
    if (!t.dirty)
      continue;
    t.dirty = false;
    if (!t.fluid)
      continue;
    double rate = rateOf(t);
    if (rate == t.rate)
      continue;
    t.rate = rate;
    ++t.version;
    // A link without bandwidth never finishes: the deadlock check reports
    // whoever waits for it.
    if (rate > 0)
      pushFinish(now + t.remaining / rate, id);
    else
      dropFinish(id);
  }
  dirty.clear();
}

void Simulation::pushFinish(double time, uint32_t id) {
  Event event{time, nextSeq++, id, transfers[id].version, EventKind::Finish};
  if (finishAt[id] == kNotQueued) {
    queue.push(event);
    return;
  }
  ++events;
  queue.replace(finishAt[id], event);
}

void Simulation::dropFinish(uint32_t id) {
  if (finishAt[id] == kNotQueued)
    return;
  // Where it is: its time and sequence number stay.
  Event dropped = queue[finishAt[id]];
  dropped.kind = EventKind::Dropped;
  queue.replace(finishAt[id], dropped);
  finishAt[id] = kNotQueued;
}

void Simulation::enterFluid(uint32_t id, double now) {
  if (transfers[id].remaining <= 0) {
    completeTransfer(id, now);
    return;
  }
  touchLinks(id, now);
  Transfer &t = transfers[id];
  t.fluidStart = now;
  t.lastUpdate = now;
  t.fluid = true;
  for (int64_t link : t.links)
    linkActive[link].push_back(id);
  markDirty(id);
}

void Simulation::finishFluid(uint32_t id, double now) {
  touchLinks(id, now);
  Transfer &t = transfers[id];
  for (int64_t link : t.links) {
    llvm::SmallVector<uint32_t, 2> &active = linkActive[link];
    auto it = std::find(active.begin(), active.end(), id);
    assert(it != active.end() && "transfer not on its link");
    *it = active.back();
    active.pop_back();
  }
  t.fluid = false;
  completeTransfer(id, now);
}

void Simulation::completeTransfer(uint32_t id, double now) {
  Transfer &t = transfers[id];
  if (trace && t.fluidStart >= 0) {
    uint32_t begin = trace->links.size();
    for (auto [link, physical] : llvm::zip_equal(t.links, t.physicalLinks))
      if (trace->linkClassTraced[linkClassAt(link)]) {
        trace->links.push_back(linkClassAt(link));
        trace->playedLinks.push_back(physical);
      }
    if (trace->links.size() > begin)
      trace->transfers.push_back({logicalOf(t.src), t.target, t.label, t.bytes,
                                  t.fluidStart, now - t.fluidStart, begin,
                                  static_cast<uint32_t>(trace->links.size())});
  }
  int64_t src = t.src, dst = t.dst;
  uint32_t label = t.label;
  double issued = t.issued;
  uint64_t sendKey = t.sendKey, recvKey = t.recvKey;
  bool blocking = t.blocking;
  uint32_t run = t.run, group = t.group;
  ++t.version;
  freeTransfers.push_back(id);
  // The transfer arrives with its last part.
  if (--groupParts[group] > 0)
    return;
  freeGroups.push_back(group);
  if (run == kNoRun && trace && trace->playedTraced[src])
    trace->comm.push_back({src, label, /*permute=*/true, issued, now - issued});

  // The sender first: its own send done.
  if (run != kNoRun) {
    if (--runs[run].pending == 0)
      runSatisfied(run, now);
  } else if (blocking) {
    if (--devices[src].pending == 0)
      satisfied(src, now);
  } else {
    releaseSlot(src, sendKey, now);
  }
  deliverKey(dst, recvKey, now);
}

//===----------------------------------------------------------------------===//
// The run and the report
//===----------------------------------------------------------------------===//

llvm::Error Simulation::run() {
  for (int64_t d = 0; d < numPlayed; ++d)
    advance(d, 0);
  double now = 0;
  while (true) {
    if (queue.empty() || queue.top().time != now) {
      settleRates(now);
      if (queue.empty())
        break;
    }
    Event event = queue.top();
    queue.pop();
    ++events;
    now = event.time;
    switch (event.kind) {
    case EventKind::Resume:
      assert(devices[event.id].state == DeviceState::Computing &&
             "unexpected resume");
      ++devices[event.id].pc;
      advance(event.id, now);
      break;
    case EventKind::Launch:
      playRounds(event.id, now);
      break;
    case EventKind::FluidStart:
      assert(transfers[event.id].version == event.version && "stale start");
      enterFluid(event.id, now);
      break;
    case EventKind::Finish:
      assert(transfers[event.id].version == event.version && "stale finish");
      finishAt[event.id] = kNotQueued;
      finishFluid(event.id, now);
      break;
    case EventKind::Dropped:
      break;
    }
  }

  // Played devices are numbered in the order of their logical ones: the
  // first stuck is the lowest-numbered stuck device.
  for (int64_t d = 0; d < numPlayed; ++d) {
    const Device &dev = devices[d];
    if (dev.state == DeviceState::Finished)
      continue;
    const SimStep &step = program.steps[dev.pc];
    std::string what;
    switch (dev.state) {
    case DeviceState::Collective:
    case DeviceState::Done: {
      // Waiting for its part of a collective: say where that is stuck.
      uint32_t collective = step.kind == SimStep::Kind::Collective ? dev.pc
                            : step.kind == SimStep::Kind::CollectiveDone
                                ? step.start
                                : kNoRun;
      auto run = llvm::find_if(runs, [&](const CollectiveRun &r) {
        return r.device == d && r.step == collective;
      });
      if (run != runs.end()) {
        const StepInfo &info = infos[collective];
        what = llvm::formatv("waiting for {0} transfer(s) in round {1} of {2} "
                             "of its collective",
                             run->pending, run->round - info.roundsBegin + 1,
                             info.roundsEnd - info.roundsBegin)
                   .str();
        break;
      }
      [[fallthrough]];
    }
    case DeviceState::Permute:
      what = llvm::formatv("waiting for {0} transfer(s)", dev.pending).str();
      break;
    case DeviceState::Slot:
      what = "waiting for a free DMA slot";
      break;
    default:
      what = "never resumed";
      break;
    }
    std::string at;
    llvm::raw_string_ostream(at) << llvm::format("%g", now);
    return makeError(llvm::formatv(
        "deadlock: no events left at t = {0} s but device {1} (physical {2}) "
        "is stuck at step {3} ({4} '{5}'), {6}",
        at, logicalOf(d), assignment.physical(logicalOf(d)), dev.pc,
        stringifyStepKind(step.kind), program.labels[step.label], what));
  }
  return llvm::Error::success();
}

int64_t Simulation::criticalPlayed() const {
  int64_t critical = 0;
  for (int64_t d = 1; d < numPlayed; ++d)
    if (devices[d].finish > devices[critical].finish)
      critical = d;
  return critical;
}

SimReport Simulation::makeReport() const {
  SimReport report;
  report.hardware = hw.name;
  report.topology = topology.describe();
  report.hbmCapacityBytes = hw.hbmCapacity;
  report.numDevices = numDevices;
  report.simulatedDevices = numPlayed;
  report.symmetry = symmetry->describe();
  int64_t critical = criticalPlayed();
  const Device &dev = devices[critical];
  report.criticalDevice = logicalOf(critical);
  report.stepTime = dev.finish;
  report.earliestFinish = dev.finish;
  for (int64_t d = 0; d < numPlayed; ++d)
    report.earliestFinish = std::min(report.earliestFinish, devices[d].finish);
  report.computeTime = dev.computeTime;
  report.commTime = dev.commTime;
  report.exposedCommTime = std::max(0.0, dev.finish - dev.computeTime);
  report.overlapFraction =
      dev.commTime > 0
          ? std::clamp(1 - report.exposedCommTime / dev.commTime, 0.0, 1.0)
          : 1.0;
  report.bytesSent = static_cast<double>(dev.sentUnits) / kSentUnitsPerByte;
  report.events = events;

  // FLOPs and per-op figures are those of the program, the same on every
  // device; only the waits are the critical device's.
  std::array<double, kNumElementKinds> flopsByKind = {};
  size_t numLabels = program.labels.size();
  std::vector<int64_t> order(numLabels, -1);
  for (const SimStep &step : program.steps) {
    if (order[step.label] < 0) {
      order[step.label] = report.ops.size();
      report.ops.push_back(SimOpStats{program.labels[step.label], 0, 0, 0});
    }
    SimOpStats &op = report.ops[order[step.label]];
    ++op.count;
    if (step.kind == SimStep::Kind::Compute) {
      op.computeSeconds += step.seconds;
      report.flops += step.flops;
      flopsByKind[static_cast<unsigned>(step.elementKind)] += step.flops;
    }
  }
  for (size_t label = 0; label < numLabels; ++label) {
    if (order[label] < 0)
      continue;
    report.ops[order[label]].exposedSeconds =
        perDeviceStats ? perDevice[critical * numLabels + label]
                       : perLabel[label];
  }
  if (report.stepTime > 0)
    report.flopsPerSecond = report.flops / report.stepTime;
  unsigned mainKind = std::max_element(flopsByKind.begin(), flopsByKind.end()) -
                      flopsByKind.begin();
  double peak = hw.peak(static_cast<ElementKind>(mainKind));
  if (peak > 0)
    report.utilization = report.flopsPerSecond / peak;
  return report;
}

llvm::Expected<SimReport> mlir::ovl::simulate(const SimProgram &program,
                                              const MachineModel &machine,
                                              const SimOptions &options) {
  int64_t devices = machine.assignment.getNumLogicalDevices();
  int64_t steps = static_cast<int64_t>(program.steps.size());
  if (steps > 0 && devices > kMaxSimulatedDeviceSteps / steps)
    return makeError(llvm::formatv(
        "the simulation would play {0} steps on each of {1} devices, more "
        "than {2} device-steps",
        steps, devices, kMaxSimulatedDeviceSteps));
  for (auto [i, d] : llvm::enumerate(options.traceDevices))
    if (d < 0 || d >= devices || (i > 0 && d <= options.traceDevices[i - 1]))
      return makeError(llvm::formatv(
          "trace device {0} is not one of the {1} devices in ascending "
          "order",
          d, devices));
  if (options.traceMaxSpans < 0)
    return makeError("a negative bound on the trace's spans");
  // A list of every device is the trace of every device.
  SimOptions played = options;
  if (static_cast<int64_t>(played.traceDevices.size()) == devices)
    played.traceDevices.clear();
  std::optional<detail::TraceRecord> trace;
  if (options.trace)
    trace.emplace();
  Simulation simulation(program, machine, played,
                        /*statsDevice=*/-1, trace ? &*trace : nullptr);
  if (llvm::Error err = simulation.prepare())
    return std::move(err);
  if (llvm::Error err = simulation.run())
    return std::move(err);
  SimReport report = simulation.makeReport();
  // Hardware figures are bounded (verifyHardware) and sizes are int64s, so
  // every figure is finite and the JSON report is JSON.
  assert(std::isfinite(report.stepTime) && std::isfinite(report.commTime) &&
         std::isfinite(report.computeTime) && std::isfinite(report.flops) &&
         std::isfinite(report.bytesSent) && "a simulated figure is not finite");

  if (!simulation.hasPerDeviceStats()) {
    // Too many (device, op) pairs to keep: run again (deterministically the
    // same) keeping the waits of the critical device only.
    Simulation again(program, machine, played, report.criticalDevice, nullptr);
    if (llvm::Error err = again.prepare())
      return std::move(err);
    if (llvm::Error err = again.run())
      return std::move(err);
    report.ops = again.makeReport().ops;
  }

  if (options.trace) {
    std::vector<int64_t> traced = played.traceDevices;
    if (traced.empty())
      for (int64_t d = 0; d < devices; ++d)
        traced.push_back(d);
    report.traceNote =
        detail::writeChromeTrace(*trace, program, machine.topology,
                                 machine.assignment, simulation.getSymmetry(),
                                 traced, options.traceMaxSpans, *options.trace);
  }
  return report;
}
