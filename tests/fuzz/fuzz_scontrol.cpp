// What node 0's agent reads of Slurm's command-line tools (agent/slurm/):
// `scontrol --json show job` or squeue's STATE|END|PREEMPT|REASON (why Slurm
// stopped the step, the time the job has left, the Comment), scontrol's
// answer where it has no --json, the job's Comment as squeue prints it,
// SLURM_JOB_END_TIME. Their text
// carries fields the job's user sets (the job's name, its Comment), so any
// bytes may come. What the agent makes of them: one line for the root cause,
// a Comment within Slurm's bound that keeps ours whole, a time left that is
// never negative.
//
// Input: an answer, read as scontrol's JSON and as squeue's line; its
// first line also serves as the old Comment and as SLURM_JOB_END_TIME.
#include <chrono>
#include <csignal>
#include <string>

#include "fuzz.hpp"
#include "slurm/job_report.hpp"
#include "slurm/job_fields.hpp"
#include "slurm/time_limit_watch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(ddp::fuzz::as_text(data, size));
  const std::string first = text.substr(0, text.find('\n'));
  const auto from_json = ddp::agent::job_fields_from_json(text);  // never throws
  const auto from_line = ddp::agent::job_fields_from_squeue(text);
  (void)ddp::agent::scontrol_has_no_json(false, text);
  for (const int sig : {SIGTERM, SIGKILL, SIGUSR1}) {
    if (from_line) {
      const auto said = ddp::agent::slurm_stop_text(*from_line, sig);
      FUZZ_CHECK(said.rfind("Slurm stopped ", 0) == 0);
      FUZZ_CHECK(said.find('\n') == std::string::npos);  // one line, whatever the job's fields hold
    }
    if (from_json) FUZZ_CHECK(ddp::agent::slurm_stop_text(*from_json, sig).rfind("Slurm stopped ", 0) == 0);
  }
  if (from_line)
    if (const auto left = ddp::agent::time_left_of(*from_line, 1700000000)) FUZZ_CHECK(left->count() >= 0);
  if (from_json)
    if (const auto left = ddp::agent::time_left_of(*from_json, 1700000000)) FUZZ_CHECK(left->count() >= 0);
  const std::string ours = "ddp: step 7.0: class exception: worker rank 3 exited with 1";
  const auto comment = ddp::agent::comment_with(first, ours);
  FUZZ_CHECK(comment.size() <= 400);
  if (first.size() < 300) FUZZ_CHECK(comment.find(ours) != std::string::npos);
  // Written again over itself (the next verdict), the user's part is kept once.
  FUZZ_CHECK(ddp::agent::comment_with(comment, ours) == comment || comment.size() >= 397);
  (void)ddp::agent::end_time_from_env(first.c_str());
  return 0;
}
