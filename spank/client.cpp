// The client commands: srun (S_CTX_LOCAL), sbatch and salloc
// (S_CTX_ALLOCATOR), as the user, on the submit host or inside a job. Named
// for the processes it runs in, like slurmstepd.cpp (pyxis: pyxis_srun.c,
// pyxis_slurmstepd.c); "client" rather than "srun" because sbatch and salloc
// run it too (the --no-kill warning, the SDDP_* checks).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ddp/base/parse.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "log.hpp"
#include "login_host.hpp"
#include "slurm.hpp"
#include "state.hpp"

namespace ddp::spank {

namespace {

// srun: the step's rendezvous secret. It travels in the step's environment
// (SLURM_* variables survive --export=NONE), so only the job's own processes
// know it; the agents prove it to each other without sending it (see
// ddp/wire/rdzv_protocol.hpp). spank_setenv() works only in the remote context, so it
// goes into srun's own environment now, before srun copies that environment
// for the step (later, in slurm_spank_local_user_init, would be too late).
int make_step_secret() {
  const std::string secret = rdzv::random_hex(32);
  if (::setenv("SLURM_DDP_SECRET", secret.c_str(), 1) != 0) {
    error("cannot set SLURM_DDP_SECRET for the step");
    return -1;
  }
  return 0;
}

// slurmctld's configuration, asked once per srun; null when it did not answer.
using CtlConf = std::unique_ptr<slurm_conf_t, void (*)(slurm_conf_t*)>;
CtlConf load_ctl_conf() {
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) conf = nullptr;
  return CtlConf(conf, [](slurm_conf_t* c) {
    if (c) slurm_compat::free_conf(c);
  });
}

// srun: Slurm's KillWait, once per step here rather than by every node, for
// the agents' default stop grace (stop_grace_for). Travels like the secret.
// Unknown (slurmctld did not answer): the nodes assume Slurm's default.
void export_kill_wait(const slurm_conf_t* conf) {
  if (conf) ::setenv("SLURM_DDP_KILL_WAIT", std::to_string(conf->kill_wait).c_str(), 1);
}

// This srun's own release, from `srun --version` (10 ms; the plugin's headers
// say only the release it was built against, and the bug is srun's).
std::optional<std::string> own_release() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return std::nullopt;
  exe[n] = '\0';
  std::FILE* out = ::popen(("'" + std::string(exe) + "' --version 2>/dev/null").c_str(), "r");
  if (!out) return std::nullopt;
  char line[256] = "";
  const bool read = std::fgets(line, sizeof line, out) != nullptr;
  ::pclose(out);
  return read ? srun_release(line) : std::nullopt;
}

HostIdentity this_host() {
  HostIdentity me;
  char name[256] = "";
  if (::gethostname(name, sizeof name - 1) == 0) {
    me.names.emplace_back(name);
    if (const char* dot = std::strchr(name, '.')) me.names.emplace_back(name, std::size_t(dot - name));
  }
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return me;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    me.addresses.emplace_back(text);
  }
  ::freeifaddrs(list);
  return me;
}

// Is this host one Slurm knows (the controller's or a node's)? One more
// RPC, only where the bug applies.
bool known_to_slurm(const slurm_conf_t& conf) {
  const auto me = this_host();
  for (std::uint32_t i = 0; i < conf.control_cnt; ++i) {
    const char* addr = conf.control_addr && conf.control_addr[i] ? conf.control_addr[i] : conf.control_machine[i];
    if (addr && names_this_host(addr, me)) return true;
  }
  node_info_msg_t* nodes = nullptr;
  if (slurm_load_node(0, &nodes, SHOW_ALL) != SLURM_SUCCESS || !nodes) return true;  // cannot tell: say nothing
  bool known = false;
  for (std::uint32_t i = 0; i < nodes->record_count && !known; ++i)
    known = nodes->node_array[i].node_addr && names_this_host(nodes->node_array[i].node_addr, me);
  slurm_free_node_info_msg(nodes);
  return known;
}

// srun --ddp-spares/--ddp-min-nodes on Slurm 22.05.7 or 22.05.8, on a host
// that is neither a node nor the controller: warn (login_host.hpp). A batch
// script and a step's task run on a node (SLURMD_NODENAME is set there).
void warn_if_node_failure_unreachable(const slurm_conf_t* conf) {
  constexpr bool built_for_22_05 = SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 6, 0);  // else no such srun
  const auto& request = state().request;
  if (!built_for_22_05 || (request.spares == 0 && !request.min_nodes) || std::getenv("SLURMD_NODENAME") || !conf)
    return;
  const auto release = own_release();
  if (!release || !loses_node_failures_off_node(*release) || known_to_slurm(*conf)) return;
  std::fprintf(stderr, "ddp: warning: %s\n", printable(login_host_warning(*release)).c_str());
}

// srun with --ddp-requeue: Slurm requeues batch jobs only, and only those
// that may be requeued. Said now, before anything starts, rather than when
// the warning signal comes, hours in. slurmctld not answering is no reason to
// refuse: node 0's agent then reports what scontrol says.
Status check_requeue_possible() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job)
    return fail("--ddp-requeue needs a batch job, and this srun makes its own allocation: Slurm requeues only jobs "
                "submitted with sbatch; run the srun inside an sbatch script");
  const auto id = parse_uint(job, 1, 0xffffffffu, "SLURM_JOB_ID");
  if (!id) return Ok{};
  job_info_msg_t* info = nullptr;
  if (slurm_compat::load_job(&info, std::uint32_t(*id)) != SLURM_SUCCESS || !info || info->record_count < 1) {
    if (info) slurm_free_job_info_msg(info);
    return Ok{};
  }
  const bool batch = info->job_array[0].batch_flag != 0;
  const bool requeue = info->job_array[0].requeue != 0;
  slurm_free_job_info_msg(info);
  if (!batch)
    return fail("--ddp-requeue: job " + std::string(job) +
                " was made by salloc or srun, and Slurm requeues batch jobs only; submit the script with sbatch");
  if (!requeue)
    return fail("--ddp-requeue: job " + std::string(job) +
                " may not be requeued (sbatch --no-requeue, or JobRequeue=0 in slurm.conf); submit it with "
                "sbatch --requeue");
  return Ok{};
}

// This process's command line (srun's, sbatch's, salloc's), word by word.
std::vector<std::string> own_words() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> words;
  for (std::string word; std::getline(in, word, '\0');) words.push_back(word);
  return words;
}

// The words of the #SBATCH lines of any file among `words` (the batch script,
// wherever it sits among sbatch's options).
std::vector<std::string> sbatch_directives(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i < words.size(); ++i) {
    std::error_code ec;
    if (words[i].empty() || words[i][0] == '-' || !std::filesystem::is_regular_file(words[i], ec)) continue;
    std::ifstream script(words[i]);
    std::string line;
    for (int n = 0; n < 1000 && std::getline(script, line); ++n) {
      if (line.rfind("#SBATCH", 0) != 0) continue;
      std::istringstream split(line.substr(7));
      for (std::string w; split >> w;) out.push_back(w);
    }
  }
  return out;
}

// --ddp-spares/--ddp-min-nodes: the step must outlive a lost node (see
// check_no_kill and doc/node-loss.md). srun refuses without --no-kill: its
// command line is all there is. sbatch and salloc only warn: the job's
// --no-kill may come from places this process does not see (a cli_filter).
bool check_no_kill_here(std::vector<std::string> words) {
  const auto& request = state().request;
  if (request.spares == 0 && !request.min_nodes) return true;
  if (spank_context() == S_CTX_LOCAL) {
    const auto ok = check_no_kill(request, asks_no_kill(words) || std::getenv("SLURM_NO_KILL"));
    if (!ok) error(ok.error());
    return ok.ok();
  }
  const auto more = sbatch_directives(words);
  words.insert(words.end(), more.begin(), more.end());
  const bool no_kill = asks_no_kill(words) || std::getenv("SBATCH_NO_KILL") || std::getenv("SALLOC_NO_KILL");
  // sbatch shows no info-level log line (slurm_spank_log): straight to the
  // user's terminal, like its own "Submitted batch job".
  if (const auto ok = check_no_kill(request, no_kill); !ok)
    std::fprintf(stderr, "ddp: warning: the job was not submitted with --no-kill: %s\n",
                 printable(ok.error()).c_str());
  return true;
}

// sbatch --ddp-requeue: the job must be submitted with the warning signal
// the agents requeue on. Slurm 22.05 shows a job's --signal nowhere a step
// could read it, so sbatch says it, reading what it was given: its command
// line, SBATCH_SIGNAL, the script's #SBATCH lines (in Slurm's order). A
// warning: scancel --signal=USR1 (preempting by hand) still works.
void check_requeue_signal_here(const std::vector<std::string>& words) {
  if (words.empty() || std::filesystem::path(words[0]).filename() != "sbatch") return;
  auto signal = signal_option(words);
  if (!signal && std::getenv("SBATCH_SIGNAL")) signal = std::getenv("SBATCH_SIGNAL");
  if (!signal) signal = signal_option(sbatch_directives(words));
  if (const auto ok = check_requeue_signal(state().request, signal); !ok)
    std::fprintf(stderr, "ddp: warning: %s\n", printable(ok.error()).c_str());
}

}  // namespace

int client_init_post_opt(spank_t) {
  const auto lookup = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  // Under --ddp only: the names the plugin read before 0.4.0, said once here
  // rather than by every node.
  if (state().request.active())
    if (const auto retired = retired_variables_warning(lookup))
      std::fprintf(stderr, "ddp: warning: %s\n", printable(*retired).c_str());
  // Under --ddp, SDDP_* variables fill in what no option said; srun checks
  // them here, once, before anything is allocated (the compute nodes read
  // them again). Without --ddp nothing is read.
  auto env = apply_environment(state().request, lookup);
  if (!env) {
    error(env.error());
    return -1;
  }
  const auto status = validate(state().request);
  if (!status) {
    error(status.error());
    return -1;  // srun/sbatch stops here, before anything is allocated
  }
  if (state().request.active() && state().args_error) {
    error(*state().args_error + " (ask the admin to fix the spank_ddp.so line in plugstack.conf)");
    return -1;
  }
  const auto words = state().request.active() ? own_words() : std::vector<std::string>{};
  if (state().request.active() && !check_no_kill_here(words)) return -1;
  if (state().request.active() && spank_context() == S_CTX_ALLOCATOR) check_requeue_signal_here(words);
  if (spank_context() != S_CTX_LOCAL || !state().request.active()) return 0;
  if (state().request.requeue.value_or(false))
    if (auto ok = check_requeue_possible(); !ok) {
      error(ok.error());
      return -1;
    }
  const auto conf = load_ctl_conf();
  export_kill_wait(conf.get());
  warn_if_node_failure_unreachable(conf.get());
  return make_step_secret();
}

}  // namespace ddp::spank
