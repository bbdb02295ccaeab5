#include "ddp/node/port_holder.hpp"

#include <dirent.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace ddp {

namespace {

using Holder = PortRefusal::Holder;

// The process with a descriptor on socket `inode`, among those /proc lets this
// process read (its own user's, or all for root); 0 when none is found.
pid_t pid_with_socket(unsigned long inode) {
  if (inode == 0) return 0;
  const std::string target = "socket:[" + std::to_string(inode) + "]";
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  pid_t found = 0;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = pid_t(std::strtol(entry->d_name, nullptr, 10));
    if (pid <= 0) continue;
    const std::string dir = "/proc/" + std::string(entry->d_name) + "/fd";
    DIR* fds = ::opendir(dir.c_str());
    if (!fds) continue;  // another user's: not ours to read
    char link[64];
    while (const dirent* fd = ::readdir(fds)) {
      const ssize_t n = ::readlink((dir + "/" + fd->d_name).c_str(), link, sizeof link);
      if (n > 0 && std::string_view(link, std::size_t(n)) == target) found = pid;
    }
    ::closedir(fds);
    if (found) break;
  }
  ::closedir(proc);
  return found;
}

// A bound Unix stream socket by its abstract name, as the kernel's sock_diag
// tells any process of the network namespace: its owner's uid and its inode.
struct UnixSocketOwner {
  std::optional<uid_t> uid;
  unsigned long inode = 0;
};

// Whether netlink message `h` describes the stream socket named "\0" + `name`;
// its owner's uid, if the kernel says (Linux 5.3+).
bool diag_matches(const nlmsghdr* h, std::string_view name, UnixSocketOwner& owner) {
  const auto* msg = static_cast<const unix_diag_msg*>(NLMSG_DATA(h));
  if (msg->udiag_type != SOCK_STREAM) return false;
  bool named = false;
  std::optional<uid_t> uid;
  int left = int(h->nlmsg_len) - int(NLMSG_LENGTH(sizeof *msg));
  for (auto* attr = reinterpret_cast<const rtattr*>(msg + 1); RTA_OK(attr, left); attr = RTA_NEXT(attr, left)) {
    const auto* data = static_cast<const char*>(RTA_DATA(attr));
    const auto size = std::size_t(RTA_PAYLOAD(attr));
    if (attr->rta_type == UNIX_DIAG_NAME)
      named = size == name.size() + 1 && data[0] == '\0' && std::string_view(data + 1, name.size()) == name;
#ifdef UDIAG_SHOW_UID
    if (attr->rta_type == UNIX_DIAG_UID && size >= sizeof(std::uint32_t)) {
      std::uint32_t value = 0;
      std::memcpy(&value, data, sizeof value);
      uid = uid_t(value);
    }
#endif
  }
  if (!named) return false;
  owner = {uid, msg->udiag_ino};
  return true;
}

std::optional<UnixSocketOwner> unix_socket_owner(std::string_view name) {
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return std::nullopt;
  struct {
    nlmsghdr header;
    unix_diag_req request;
  } ask{};
  ask.header.nlmsg_len = sizeof ask;
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  ask.request.sdiag_family = AF_UNIX;
  ask.request.udiag_states = ~0U;
  ask.request.udiag_show = UDIAG_SHOW_NAME
#ifdef UDIAG_SHOW_UID
                           | UDIAG_SHOW_UID
#endif
      ;
  std::optional<UnixSocketOwner> found;
  if (::send(fd, &ask, sizeof ask, 0) == ssize_t(sizeof ask)) {
    alignas(nlmsghdr) char buf[32768];
    for (bool done = false; !done;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      // NLMSG_OK and NLMSG_NEXT, spelled out without their mixed-sign comparison.
      for (std::size_t at = 0; !done && at + sizeof(nlmsghdr) <= std::size_t(n);) {
        const auto* h = reinterpret_cast<const nlmsghdr*>(buf + at);
        if (h->nlmsg_len < sizeof(nlmsghdr) || at + h->nlmsg_len > std::size_t(n)) {
          done = true;  // not the kernel's answer: stop reading rather than wait for more
          break;
        }
        done = h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR;
        UnixSocketOwner owner;
        if (!done && !found && diag_matches(h, name, owner)) found = owner;
        at += NLMSG_ALIGN(h->nlmsg_len);
      }
    }
  }
  ::close(fd);
  return found;
}

// The listening holder's credentials, asked through the claim itself; nullopt
// when nothing listens there (or its queue is full).
std::optional<ucred> listener_of(std::uint16_t port) {
  socklen_t length = 0;
  const sockaddr_un addr = claim_address(port, length);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::nullopt;
  std::optional<ucred> found;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), length) == 0 &&
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
    found = cred;
  ::close(fd);
  return found;
}

PortRefusal judged(std::uint16_t port, pid_t pid, uid_t uid, std::string_view how) {
  const std::string who = "pid " + std::to_string(pid) + ", " + user_text(uid);
  const auto facts = process_facts(pid);
  if (facts && is_step_process(*facts, process_facts(facts->parent))) return {port, Holder::SlurmDdpStep, who};
  return {port, Holder::OtherProcess, who + ", " + std::string(how)};
}

}  // namespace

std::string claim_name(std::uint16_t port) { return "slurm-ddp/port/" + std::to_string(port); }

sockaddr_un claim_address(std::uint16_t port, socklen_t& length) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = claim_name(port);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: the abstract namespace
  length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

std::string user_text(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return "user " + (pw ? std::string(pw->pw_name) + " (uid " + std::to_string(uid) + ")" : "uid " + std::to_string(uid));
}

std::optional<ProcessFacts> process_facts(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  ProcessFacts facts;
  bool uid_seen = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "Name:") std::getline(fields >> std::ws, facts.name);
    if (key == "PPid:") fields >> facts.parent;
    if (key == "Uid:") uid_seen = bool(fields >> facts.real_uid);
  }
  if (!uid_seen) return std::nullopt;
  return facts;
}

bool is_step_process(const ProcessFacts& holder, const std::optional<ProcessFacts>& parent) {
  const auto slurmstepd = [](const ProcessFacts& p) { return p.real_uid == 0 && p.name == "slurmstepd"; };
  return slurmstepd(holder) || (parent && slurmstepd(*parent));
}

PortRefusal claim_holder(std::uint16_t port, bool name) {
  const auto named = [&](PortRefusal refusal) {
    if (!name) refusal.who.clear();
    return refusal;
  };
  if (const auto cred = listener_of(port)) {
    if (cred->pid == ::getpid()) return named({port, Holder::SlurmDdpStep, "this step"});
    return named(judged(port, cred->pid, cred->uid, "holding the port's claim name"));
  }
  // Nothing listens: a step between its bind() and listen(), or a process
  // that is not a step (a step always listens). A moment later a step would.
  if (!name) return {port, Holder::OtherProcess, ""};
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (const auto cred = listener_of(port)) return judged(port, cred->pid, cred->uid, "holding the port's claim name");
  const auto owner = unix_socket_owner(claim_name(port));
  const pid_t pid = owner ? pid_with_socket(owner->inode) : 0;
  const auto facts = pid ? process_facts(pid) : std::nullopt;
  std::string who = pid ? "pid " + std::to_string(pid) + ", " : "";
  if (owner && owner->uid)
    who += user_text(*owner->uid) + ", ";
  else if (facts)
    who += user_text(facts->real_uid) + ", ";
  return {port, Holder::OtherProcess, who + "holding the port's claim name without listening"};
}

std::string tcp_port_holder(std::uint16_t port) {
  std::string found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits;
      unsigned long uid = 0, timeout = 0, inode = 0;
      if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode))
        continue;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos || std::strtoul(local.c_str() + colon + 1, nullptr, 16) != port) continue;
      const bool listening = state == "0A";
      if (!found.empty() && !listening) continue;
      const pid_t pid = listening ? pid_with_socket(inode) : 0;
      found = (pid ? "pid " + std::to_string(pid) + ", " : "") + user_text(uid_t(uid)) +
              (listening ? ", listening" : ", a connection");
      if (listening) return found;
    }
  }
  return found;
}

}  // namespace ddp
