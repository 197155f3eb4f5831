//===- MpiWorld.cpp - Process-wide state of the MPI transport -------------===//
//
// MPI start-up and shut-down, the control mailbox, message encoding and the
// timed waits with their lost-peer checks. MPI errors are returned
// (MPI_ERRORS_RETURN) and turned into the runtime's one-line fatal errors,
// which abort the whole job.
//
//===----------------------------------------------------------------------===//

#include "MpiWorld.h"

#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

using namespace ovlrt;
using namespace ovlrt::mpi;

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

void MessageWriter::integer(int64_t value) {
  const char *raw = reinterpret_cast<const char *>(&value);
  bytes.insert(bytes.end(), raw, raw + sizeof(value));
}

void MessageWriter::integers(const std::vector<int64_t> &values) {
  integer(static_cast<int64_t>(values.size()));
  for (int64_t value : values)
    integer(value);
}

void MessageWriter::text(const std::string &value) {
  integer(static_cast<int64_t>(value.size()));
  bytes.insert(bytes.end(), value.begin(), value.end());
}

void MessageWriter::descriptor(const CallDescriptor &desc) {
  integer(static_cast<int64_t>(desc.kind));
  text(desc.opName);
  text(desc.location);
  integer(static_cast<int64_t>(desc.dtype));
  integers(desc.inSizes);
  integers(desc.outSizes);
  integers(desc.gridShape);
  integers(desc.axes);
  integer(desc.dim);
  integer(static_cast<int64_t>(desc.reduction));
  integers(desc.pairs);
}

bool MessageReader::take(void *dst, size_t size) {
  if (bad || bytes.size() - at < size) {
    bad = true;
    return false;
  }
  std::memcpy(dst, bytes.data() + at, size);
  at += size;
  return true;
}

int64_t MessageReader::integer() {
  int64_t value = 0;
  return take(&value, sizeof(value)) ? value : 0;
}

std::vector<int64_t> MessageReader::integers() {
  int64_t count = integer();
  // Each element takes 8 bytes: a larger count is malformed, and checking
  // first keeps a corrupt count from allocating.
  if (count < 0 || static_cast<uint64_t>(count) > (bytes.size() - at) / 8) {
    bad = true;
    return {};
  }
  std::vector<int64_t> values(count);
  for (int64_t &value : values)
    value = integer();
  return values;
}

std::string MessageReader::text() {
  int64_t size = integer();
  if (size < 0 || static_cast<uint64_t>(size) > bytes.size() - at) {
    bad = true;
    return "";
  }
  std::string value(bytes.data() + at, size);
  at += size;
  return value;
}

CallDescriptor MessageReader::descriptor() {
  CallDescriptor desc;
  desc.kind = static_cast<CallKind>(integer());
  desc.opName = text();
  desc.location = text();
  desc.dtype = static_cast<DType>(integer());
  desc.inSizes = integers();
  desc.outSizes = integers();
  desc.gridShape = integers();
  desc.axes = integers();
  desc.dim = integer();
  desc.reduction = static_cast<Reduction>(integer());
  desc.pairs = integers();
  return desc;
}

//===----------------------------------------------------------------------===//
// World
//===----------------------------------------------------------------------===//

std::string ovlrt::mpi::formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return text;
}

Clock::time_point ovlrt::mpi::deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

World &World::get() {
  static World world;
  return world;
}

/// The fatal handler of the MPI transport: one line, then the whole job
/// ends. Aborting (rather than exiting) makes mpirun stop the other ranks,
/// which may be blocked waiting for this one.
static void abortJob(const char *message) {
  // One write: the launcher forwards each rank's stderr in the chunks it
  // reads, so that a line written in pieces can interleave with another
  // rank's.
  std::string line = std::string(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    World &world = World::get();
    world.announceAbort();
    // MPI is the main thread's (MPI_THREAD_FUNNELED). A watchdog reports
    // while the main thread is inside a blocking MPI call: this process
    // then ends alone, and the launcher, which sees it fail, ends the job.
    if (world.isMpiThread()) {
      // MPI_Abort asks the launcher to end the job; a launcher cut off by
      // the failure that is being reported may never do it.
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::_Exit(kFatalExitCode);
      }).detach();
      MPI_Abort(MPI_COMM_WORLD, kFatalExitCode);
    }
  }
  std::_Exit(kFatalExitCode);
}

FatalHandler ovlrt::mpi::getAbortHandler() { return abortJob; }

namespace {
/// Watches a blocking MPI call that waits for other ranks (MPI_Init,
/// MPI_Finalize, MPI_Comm_create_group): MPI offers no timed form of them,
/// and a rank that never comes, or is lost inside, would keep the others
/// in them for ever. Until destroyed, a thread calls `watch` (if any) every
/// 10 ms, which ends the process if it finds a reason to, and once
/// `seconds` have passed, `expired` (which reports) and ends the process.
class Watchdog {
public:
  Watchdog(double seconds, std::function<void()> expired,
           std::function<void()> watch = nullptr) {
    thread = std::thread([this, seconds, expired = std::move(expired),
                          watch = std::move(watch)] {
      Clock::time_point deadline = deadlineAfter(seconds);
      while (true) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          Clock::time_point until =
              watch ? std::min(deadline,
                               Clock::now() + std::chrono::milliseconds(10))
                    : deadline;
          if (wake.wait_until(lock, until, [this] { return done; }))
            return;
        }
        if (Clock::now() >= deadline) {
          expired();
          std::_Exit(kFatalExitCode);
        }
        if (watch)
          watch();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    wake.notify_one();
    thread.join();
  }

private:
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::thread thread;
};

/// The report of MPI_Init's and MPI_Finalize's watchdogs, which expire
/// where the fatal handler cannot abort the job (the watchdog then ends the
/// process).
std::function<void()> reportUnreturned(double seconds, const char *call) {
  return [seconds, call] {
    std::fprintf(stderr,
                 "ovlrt: error: %s did not return within %s s (a rank "
                 "did not start or was lost, or the launcher cannot "
                 "reach it)\n",
                 call, formatSeconds(seconds).c_str());
    std::fflush(stderr);
  };
}
} // namespace

void World::initialize(double lostAfterSeconds, double timeout) {
  if (initialized)
    fatal("internal error: the MPI transport was initialized twice");
  timeoutSeconds = timeout;
  mpiThread = std::this_thread::get_id();
  setFatalHandler(abortJob);
  // Only the host's main thread calls MPI, but the host has other threads
  // (the JIT's, the heartbeat's).
  int provided = MPI_THREAD_SINGLE;
  int code;
  {
    Watchdog watchdog(timeoutSeconds,
                      reportUnreturned(timeoutSeconds, "MPI_Init_thread"));
    code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  if (code != MPI_SUCCESS)
    fatal("MPI_Init_thread failed");
  initialized = true;
  if (provided < MPI_THREAD_FUNNELED)
    fatal("the MPI library does not support MPI_THREAD_FUNNELED");
  // Errors come back as codes so that they are reported like any other.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), 0, {}, "querying the rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), rank, {}, "querying the size");
  worldRank = rank;
  worldSize = size;
  // Into a local first: the waits drain `control` once it is set, and the
  // handle is not usable before the duplication completes.
  MPI_Comm duplicate = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Comm_idup(MPI_COMM_WORLD, &duplicate, &request), rank, {},
        "creating the control communicator");
  waitHost(request, timeoutSeconds, "creation of the control communicator");
  control = duplicate;
  void *value = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found), rank, {},
        "querying MPI_TAG_UB");
  int64_t upperBound = found ? *static_cast<int *>(value) : 32767;
  // Two tags per step (descriptor and data), both at most MPI_TAG_UB.
  period = (upperBound + 1) / 2;
  startHeartbeat(lostAfterSeconds);
}

void World::startHeartbeat(double lostAfterSeconds) {
  std::string error = heartbeat.open(lostAfterSeconds);
  if (!error.empty())
    std::fprintf(stderr,
                 "ovlrt: warning: device %lld: lost ranks are detected by "
                 "the timeouts only: %s\n",
                 static_cast<long long>(worldRank), error.c_str());
  // Every rank takes part, beating or not: the exchange is collective.
  std::random_device seed;
  uint64_t job = (uint64_t(seed()) << 32) ^ seed() ^
                 uint64_t(Clock::now().time_since_epoch().count());
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(&job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &request),
        worldRank, {}, "sharing the job's heartbeat nonce");
  waitHost(request, timeoutSeconds, "sharing of the heartbeat nonce");
  Endpoint mine = heartbeat.endpoint();
  std::vector<Endpoint> all(worldSize);
  check(MPI_Iallgather(&mine, sizeof(Endpoint), MPI_BYTE, all.data(),
                       sizeof(Endpoint), MPI_BYTE, MPI_COMM_WORLD, &request),
        worldRank, {}, "exchanging the heartbeat addresses");
  waitHost(request, timeoutSeconds, "exchange of the heartbeat addresses");
  heartbeat.begin(worldRank, job, all);
}

void World::finalize() {
  check(MPI_Comm_free(&control), worldRank, {},
        "freeing the control communicator");
  int code;
  {
    Watchdog watchdog(timeoutSeconds,
                      reportUnreturned(timeoutSeconds, "MPI_Finalize"));
    code = MPI_Finalize();
  }
  check(code, worldRank, {}, "finalizing MPI");
  // After MPI_Finalize, which waits for every rank: until then a rank may
  // still wait for this one.
  heartbeat.stop();
}

void World::checkPeers(int64_t device, const OpInfo &op) {
  std::optional<PeerWatch::Loss> loss = heartbeat.check();
  if (!loss)
    return;
  heartbeat.noteLost(loss->device);
  std::string how =
      loss->noticedBy == worldRank
          ? "no heartbeat from it for " +
                formatSeconds(std::round(loss->silentSeconds * 10) / 10) + " s"
          : "device " + std::to_string(loss->noticedBy) +
                " heard no heartbeat from it";
  fatal(device, op,
        "device " + std::to_string(loss->device) + " is lost: " + how +
            " (its process ended, or the network to it failed)");
}

int World::callWatched(double timeoutSeconds, int64_t device, const OpInfo &op,
                       const char *what, const std::function<int()> &call) {
  Watchdog watchdog(
      timeoutSeconds,
      [&] {
        fatal(device, op,
              "timed out after " + formatSeconds(timeoutSeconds) + " s " +
                  what);
      },
      [&] { checkPeers(device, op); });
  return call();
}

void World::check(int code, int64_t device, const OpInfo &op,
                  const char *what) const {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = std::snprintf(text, sizeof(text), "error code %d", code);
  fatal(device, op,
        std::string("MPI failed ") + what + ": " + std::string(text, length));
}

void World::sendControl(int64_t destination, int tag, std::vector<char> body) {
  if (body.size() > static_cast<size_t>(INT_MAX))
    fatal(worldRank, {}, "internal error: a control message is too large");
  OutgoingSend &send = outgoing.emplace_back();
  send.body = std::move(body);
  check(MPI_Isend(send.body.data(), static_cast<int>(send.body.size()),
                  MPI_BYTE, static_cast<int>(destination), tag, control,
                  &send.request),
        worldRank, {}, "sending a control message");
}

bool World::controlSendsDone() {
  for (auto it = outgoing.begin(); it != outgoing.end();) {
    int done = 0;
    check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), worldRank, {},
          "sending a control message");
    it = done ? outgoing.erase(it) : std::next(it);
  }
  return outgoing.empty();
}

void World::drainControl() {
  // Not yet created (waits of initialize).
  if (control == MPI_COMM_NULL)
    return;
  while (true) {
    int found = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, control, &found, &status),
          worldRank, {}, "polling for control messages");
    if (!found)
      break;
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), worldRank, {},
          "sizing a control message");
    std::vector<char> body(count);
    check(MPI_Recv(body.data(), count, MPI_BYTE, status.MPI_SOURCE,
                   status.MPI_TAG, control, MPI_STATUS_IGNORE),
          worldRank, {}, "receiving a control message");
    int64_t source = status.MPI_SOURCE;
    MessageReader reader(body);
    if (status.MPI_TAG == kArrivalTag) {
      int64_t launch = reader.integer();
      MemberSet members = reader.integers();
      CallDescriptor desc = reader.descriptor();
      if (!reader.failed()) {
        arrivals[{source, launch, std::move(members)}] = std::move(desc);
        continue;
      }
    } else if (status.MPI_TAG == kEndedTag) {
      int64_t run = reader.integer();
      int64_t numGroups = reader.integer();
      Ended ended;
      for (int64_t i = 0; i < numGroups && reader.good(); ++i) {
        MemberSet members = reader.integers();
        ended.calls[std::move(members)] = reader.integer();
      }
      if (!reader.failed()) {
        ends[{source, run}] = std::move(ended);
        continue;
      }
    }
    fatal(worldRank, {},
          "internal error: malformed control message from device " +
              std::to_string(source) + " (tag " +
              std::to_string(status.MPI_TAG) + ")");
  }
  controlSendsDone();
}

std::optional<CallDescriptor> World::takeArrival(int64_t source, int64_t launch,
                                                 const MemberSet &members) {
  auto it = arrivals.find({source, launch, members});
  if (it == arrivals.end())
    return std::nullopt;
  CallDescriptor desc = std::move(it->second);
  arrivals.erase(it);
  return desc;
}

const World::Ended *World::endedRun(int64_t source, int64_t programRun) const {
  auto it = ends.find({source, programRun});
  return it == ends.end() ? nullptr : &it->second;
}

void World::endRun() {
  for (auto it = ends.begin(); it != ends.end();)
    it = it->first.second == run ? ends.erase(it) : std::next(it);
  ++run;
}

void World::pause(bool spinning) {
  if (spinning)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void World::waitHost(MPI_Request &request, double timeoutSeconds,
                     const char *what) {
  std::string waiting = std::string("waiting for the ") + what;
  OpInfo op{waiting.c_str(), nullptr};
  bool done = waitUntil(deadlineAfter(timeoutSeconds), worldRank, op, [&] {
    int complete = 0;
    check(MPI_Test(&request, &complete, MPI_STATUS_IGNORE), worldRank, {},
          waiting.c_str());
    return complete != 0;
  });
  if (!done)
    fatal(worldRank, {},
          "timed out after " + formatSeconds(timeoutSeconds) +
              " s waiting for every rank to reach the " + what);
}

void World::awaitHeartbeats(double timeoutSeconds) {
  OpInfo op{"waiting for the heartbeats of every rank", nullptr};
  bool heard = waitUntil(deadlineAfter(timeoutSeconds), worldRank, op,
                         [&] { return !heartbeat.unheardPeer(); });
  if (std::optional<int64_t> peer = heartbeat.unheardPeer(); !heard && peer)
    fatal(worldRank, {},
          "timed out after " + formatSeconds(timeoutSeconds) +
              " s waiting for a heartbeat from device " +
              std::to_string(*peer) +
              " (UDP datagrams between the ranks may be blocked)");
}
