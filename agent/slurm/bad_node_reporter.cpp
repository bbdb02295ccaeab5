#include "slurm/bad_node_reporter.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ddp::agent {

void BadNodeReporter::tick(const std::vector<BadNode>& bad) {
  if (fifo_.empty() || sent_ >= bad.size()) return;
  // Non-blocking: the plugin holds the read end for the step's life (ENXIO:
  // it does not, and nobody would read); a full pipe drops the line rather
  // than stop the loop. Each line is one write below PIPE_BUF (its reason
  // cut to kMaxReasonChars by bad_node_line): never torn.
  const int fd = ::open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    spdlog::warn(
        "cannot report the bad nodes to node 0's slurmstepd ({}: {}): a requeue will not exclude them, "
        "nor will the site hear of them; the job's output names them",
        fifo_, std::strerror(errno));
    fifo_.clear();
    return;
  }
  for (; sent_ < bad.size(); ++sent_) {
    const std::string line = bad_node_line(bad[sent_]);
    if (::write(fd, line.data(), line.size()) != ssize_t(line.size()))
      spdlog::warn("cannot report node {} to the site: {}", bad[sent_].node, std::strerror(errno));
  }
  ::close(fd);
}

}  // namespace ddp::agent
