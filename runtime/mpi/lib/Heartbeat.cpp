//===- Heartbeat.cpp - Lost-rank detection of the MPI transport -----------===//
//
// Each rank binds one UDP socket on every interface and publishes its port
// and IPv4 addresses (all of them: which one a peer can reach is not known,
// and a beat that lands elsewhere is dropped or still proves its sender
// alive). A beat carries the job's nonce, so that beats of another job that
// happens to reuse a port are ignored.
//
//===----------------------------------------------------------------------===//

#include "Heartbeat.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace ovlrt;
using namespace ovlrt::mpi;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kMagic = 0x6f766c7274626561; // "ovlrtbea"

/// One datagram.
struct Beat {
  uint64_t magic;
  uint64_t job;
  int64_t sender;
  /// The device the sender reports lost, or -1.
  int64_t lost;
  int64_t leaving;
};

/// The IPv4 addresses of the interfaces that are up, loopback last.
std::vector<uint32_t> localAddresses() {
  std::vector<uint32_t> others, loopbacks;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0)
    return {htonl(INADDR_LOOPBACK)};
  for (ifaddrs *entry = list; entry; entry = entry->ifa_next) {
    if (!entry->ifa_addr || entry->ifa_addr->sa_family != AF_INET ||
        !(entry->ifa_flags & IFF_UP))
      continue;
    uint32_t address =
        reinterpret_cast<sockaddr_in *>(entry->ifa_addr)->sin_addr.s_addr;
    (entry->ifa_flags & IFF_LOOPBACK ? loopbacks : others).push_back(address);
  }
  freeifaddrs(list);
  others.insert(others.end(), loopbacks.begin(), loopbacks.end());
  if (others.size() > Endpoint::kMaxAddresses)
    others.resize(Endpoint::kMaxAddresses);
  return others;
}

std::string describeErrno(const char *what) {
  return std::string(what) + ": " + std::strerror(errno);
}

} // namespace

std::string Heartbeat::open(double seconds) {
  lostAfterSeconds = seconds;
  if (seconds <= 0)
    return "";
  std::string error;
  socket = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof(any);
  if (socket < 0)
    error = describeErrno("cannot open a UDP socket");
  else if (bind(socket, reinterpret_cast<sockaddr *>(&any), sizeof(any)))
    error = describeErrno("cannot bind a UDP socket");
  else if (getsockname(socket, reinterpret_cast<sockaddr *>(&any), &length))
    error = describeErrno("cannot read the UDP socket's port");
  else if (pipe2(wake, O_CLOEXEC | O_NONBLOCK))
    error = describeErrno("cannot open a pipe");
  if (!error.empty()) {
    stop();
    return error;
  }
  mine.port = ntohs(any.sin_port);
  std::vector<uint32_t> addresses = localAddresses();
  mine.count = static_cast<uint32_t>(addresses.size());
  std::copy(addresses.begin(), addresses.end(), mine.addresses);
  return "";
}

void Heartbeat::begin(int64_t self, uint64_t nonce,
                      const std::vector<Endpoint> &endpoints) {
  rank = self;
  int64_t size = static_cast<int64_t>(endpoints.size());
  if (mine.port == 0 || size < 2) {
    stop();
    return;
  }
  job = nonce;
  peerAddresses.assign(size, {});
  for (int64_t peer = 0; peer < size; ++peer) {
    const Endpoint &endpoint = endpoints[peer];
    if (peer == rank || endpoint.port == 0)
      continue;
    uint32_t count =
        std::min<uint32_t>(endpoint.count, Endpoint::kMaxAddresses);
    for (uint32_t i = 0; i < count; ++i) {
      sockaddr_in &to = peerAddresses[peer].emplace_back();
      to.sin_family = AF_INET;
      to.sin_port = htons(static_cast<uint16_t>(endpoint.port));
      to.sin_addr.s_addr = endpoint.addresses[i];
    }
  }
  auto lostAfter = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(lostAfterSeconds));
  // Eight beats per window, so that a few lost datagrams or a busy core do
  // not make a live rank look lost.
  period =
      std::clamp<Clock::duration>(lostAfter / 8, std::chrono::milliseconds(10),
                                  std::chrono::milliseconds(250));
  watch.emplace(rank, size, lostAfter);
  thread = std::thread([this] { run(); });
}

void Heartbeat::stop() {
  if (thread.joinable()) {
    // Twice: a datagram may be dropped.
    beat(/*leaving=*/true);
    beat(/*leaving=*/true);
    close(wake[1]);
    wake[1] = -1;
    thread.join();
  }
  for (int *fd : {&socket, &wake[0], &wake[1]})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
}

void Heartbeat::run() {
  Clock::time_point next = Clock::now();
  while (true) {
    Clock::time_point now = Clock::now();
    if (now >= next) {
      beat(/*leaving=*/false);
      next = now + period;
    }
    pollfd fds[2] = {{socket, POLLIN, 0}, {wake[0], POLLIN, 0}};
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - now);
    poll(fds, 2, static_cast<int>(wait.count()));
    // The write end closed: stop() wants the thread to end.
    if (fds[1].revents)
      return;
    if (fds[0].revents & POLLIN)
      receive();
  }
}

void Heartbeat::beat(bool leaving) {
  Beat beat{kMagic, job, rank, reportedLost.load(), leaving ? 1 : 0};
  // Failures (an unreachable network, a full buffer) are what the peers'
  // watches notice; there is nothing to do about them here.
  for (const std::vector<sockaddr_in> &addresses : peerAddresses)
    for (const sockaddr_in &to : addresses)
      (void)sendto(socket, &beat, sizeof(beat), MSG_DONTWAIT | MSG_NOSIGNAL,
                   reinterpret_cast<const sockaddr *>(&to), sizeof(to));
}

void Heartbeat::receive() {
  Beat beat;
  while (true) {
    ssize_t size = recv(socket, &beat, sizeof(beat), MSG_DONTWAIT);
    if (size < 0)
      return;
    if (size != sizeof(beat) || beat.magic != kMagic || beat.job != job)
      continue;
    std::lock_guard<std::mutex> lock(mutex);
    watch->heard(beat.sender, Clock::now(), beat.lost, beat.leaving != 0);
  }
}

std::optional<PeerWatch::Loss> Heartbeat::check() {
  if (!thread.joinable())
    return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex);
  return watch->check(Clock::now());
}

std::optional<int64_t> Heartbeat::unheardPeer() {
  if (!thread.joinable())
    return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex);
  // Exactly the peers that beat have addresses (begin()).
  for (int64_t peer = 0, e = static_cast<int64_t>(peerAddresses.size());
       peer < e; ++peer)
    if (!peerAddresses[peer].empty() && !watch->hasHeard(peer))
      return peer;
  return std::nullopt;
}

void Heartbeat::announceAbort() {
  if (!thread.joinable())
    return;
  bool reporting = reportedLost.load() >= 0;
  beat(/*leaving=*/!reporting);
  if (!reporting)
    return;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);
  while (Clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (watch->everyLivePeerReported(Clock::now()))
        return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
