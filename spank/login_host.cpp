#include "login_host.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace ddp::spank {

std::optional<std::string> srun_release(std::string_view out) {
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.remove_suffix(1);
  const auto space = out.rfind(' ');
  const auto release = out.substr(space == std::string_view::npos ? 0 : space + 1);
  if (release.empty() || !std::isdigit(static_cast<unsigned char>(release.front()))) return std::nullopt;
  return std::string(release);
}

bool loses_node_failures_off_node(std::string_view release) {
  return release == "22.05.7" || release == "22.05.8" || release.starts_with("22.05.7-") ||
         release.starts_with("22.05.8-");
}

bool names_this_host(const std::string& addr, const HostIdentity& me) {
  in_addr parsed{};
  const auto& pool = ::inet_pton(AF_INET, addr.c_str(), &parsed) == 1 ? me.addresses : me.names;
  return std::find(pool.begin(), pool.end(), addr) != pool.end();
}

std::string login_host_warning(std::string_view release) {
  return "--ddp-spares and --ddp-min-nodes need srun --no-kill, and this srun (Slurm " + std::string(release) +
         ") runs on a host that is neither a node nor the controller: Slurm 22.05.7 and 22.05.8 send a node's "
         "failure where such a host cannot receive it, so srun would not return after a node is lost (the "
         "training goes on and finishes). Upgrade Slurm to 22.05.9 or later, run the srun inside an sbatch "
         "script, or declare this host in slurm.conf as a node with State=FUTURE (see doc/node-loss.md)";
}

}  // namespace ddp::spank
