#include "bad_node_fifo.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hostlist.hpp"
#include "log.hpp"

namespace ddp::spank {

namespace {

// kReportDir: made if missing; root's, and writable by root only, or another
// user could put something of theirs where we make the FIFO.
Status check_report_dir() {
  if (::mkdir(kReportDir, 0755) != 0 && errno != EEXIST)
    return fail(std::string("cannot make ") + kReportDir + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(kReportDir, &st) != 0)
    return fail(std::string("cannot check ") + kReportDir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fail(std::string(kReportDir) + " must be a directory owned by root and writable by root only; fix with: " +
                "rm -rf " + kReportDir + " (the plugin makes it again)");
  return Ok{};
}

// What the agent wrote, up to a little past the report's bound.
std::string drain(int fd) {
  std::string text;
  char buf[4096];
  while (text.size() <= kMaxReportBytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing more; 0: no writer left
    text.append(buf, std::size_t(n));
  }
  return text;
}

// The job as slurmctld has it, for a requeue's update.
Result<JobRecord> load_job_record(std::uint32_t job) {
  job_info_msg_t* info = nullptr;
  if (slurm_compat::load_job(&info, job) != SLURM_SUCCESS || !info || info->record_count < 1) {
    const std::string why = slurm_strerror(slurm_compat::last_error());
    if (info) slurm_free_job_info_msg(info);
    return fail("slurmctld did not tell job " + std::to_string(job) + "'s state: " + why);
  }
  const slurm_job_info_t& j = info->job_array[0];
  JobRecord record;
  record.id = j.array_job_id != 0 && j.array_task_id != NO_VAL
                  ? std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id)
                  : std::to_string(job);
  record.exc_nodes = j.exc_nodes ? j.exc_nodes : "";
  record.pending = (j.job_state & JOB_STATE_BASE) == JOB_PENDING;
  slurm_free_job_info_msg(info);
  return record;
}

// The step's nodes as slurmctld has them: the job's environment is the
// user's to set, and would let a report name any node. The step's, not the
// job's: a completing job (a requeued one is) shows only the nodes still
// completing (job_mgr.c packs node_bitmap_cg), while the step keeps its
// layout until it is complete (make_report_fifo asks as the step starts).
Result<std::string> step_nodes(std::uint32_t job, std::uint32_t step) {
  job_step_info_response_msg_t* info = nullptr;
  const int rc = slurm_compat::get_job_step(&info, job, step);
  std::string nodes;
  for (std::uint32_t i = 0; rc == SLURM_SUCCESS && info && i < info->job_step_count; ++i)
    if (info->job_steps[i].step_id.job_id == job && info->job_steps[i].step_id.step_id == step)
      nodes = info->job_steps[i].nodes ? info->job_steps[i].nodes : "";
  const std::string why = rc == SLURM_SUCCESS ? "not listed" : slurm_strerror(slurm_compat::last_error());
  if (info) slurm_free_job_step_info_response_msg(info);
  if (nodes.empty())
    return fail("slurmctld did not tell step " + std::to_string(job) + "." + std::to_string(step) + "'s nodes: " + why);
  return nodes;
}

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

}  // namespace

Result<ReportFifo> make_report_fifo(std::uint32_t job, std::uint32_t step, uid_t uid, gid_t gid) {
  if (auto dir = check_report_dir(); !dir) return fail(dir.error());
  ReportFifo fifo{std::string(kReportDir) + "/" + std::to_string(job) + "." + std::to_string(step), -1, ""};
  ::unlink(fifo.path.c_str());  // a slurmstepd that died before its exit left it
  if (::mkfifo(fifo.path.c_str(), 0600) != 0) return fail("cannot make " + fifo.path + ": " + std::strerror(errno));
  fifo.fd = ::open(fifo.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fifo.fd < 0 || ::fchown(fifo.fd, uid, gid) != 0) {
    const std::string why = std::strerror(errno);
    if (fifo.fd >= 0) ::close(fifo.fd);
    ::unlink(fifo.path.c_str());
    return fail("cannot open " + fifo.path + " for the job's user: " + why);
  }
  if (auto nodes = step_nodes(job, step)) fifo.step_nodes = std::move(nodes).value();  // else asked again at the end
  return fifo;
}

Result<BadNodes> read_bad_nodes(spank_t sp, ReportFifo& fifo) {
  const std::string text = drain(fifo.fd);
  ::close(fifo.fd);
  ::unlink(fifo.path.c_str());
  fifo.fd = -1;
  BadNodes out;
  spank_get_item(sp, S_JOB_ID, &out.job);
  spank_get_item(sp, S_JOB_STEPID, &out.step);
  spank_get_item(sp, S_JOB_UID, &out.uid);
  if (text.empty()) return out;  // no bad node: no name lookup (NSS may be LDAP), no RPC
  out.user = user_name(out.uid);
  out.where = "job " + std::to_string(out.job) + "." + std::to_string(out.step) + " (user " + out.user + ")";
  const auto nodes = fifo.step_nodes.empty() ? step_nodes(out.job, out.step) : Result<std::string>(fifo.step_nodes);
  if (!nodes) return fail(nodes.error());
  auto record = load_job_record(out.job);
  if (!record) return fail(record.error());
  out.record = std::move(record).value();
  const auto report = read_bad_node_report(text, [&](const std::string& n) { return hostlist_contains(*nodes, n); });
  // One line however many were refused: the user writes the report.
  if (const auto refused = refused_summary(report); !refused.empty()) for_admin(out.where + ": " + refused);
  out.nodes = report.nodes;
  return out;
}

}  // namespace ddp::spank
