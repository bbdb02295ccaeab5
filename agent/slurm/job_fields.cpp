#include "slurm/job_fields.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "ddp/base/environment.hpp"
#include "ddp/base/json.hpp"
#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {

using nlohmann::json;

// A time in scontrol's JSON: {"set","infinite","number"} (24.11, 26.05), or
// a number (slurmrestd's v0.0.38); nullopt for unset, infinite or 0.
std::optional<std::time_t> json_time(const json& job, const char* name) {
  const auto at = job.find(name);
  if (at == job.end()) return std::nullopt;
  const json* number = &*at;
  if (at->is_object()) {
    if (at->value("infinite", false) || !at->value("set", true) || !at->contains("number")) return std::nullopt;
    number = &(*at)["number"];
  }
  if (!number->is_number() || number->get<double>() <= 0) return std::nullopt;
  return static_cast<std::time_t>(number->get<long long>());
}

// No limit: EndTime=Unknown in the text form. The JSON says so with
// "infinite", v0.0.38's with time_limit 0xfffffffe (Slurm's INFINITE).
bool json_unlimited(const json& job) {
  const auto at = job.find("time_limit");
  if (at == job.end()) return false;
  if (at->is_object()) return at->value("infinite", false);
  return at->is_number_unsigned() && at->get<unsigned long long>() >= 0xfffffffeULL;
}

// job_state: the base state and its flags (24.11, 26.05: ["FAILED"]), of
// which the text form prints COMPLETING over the base state; or a word (v0.0.38).
std::string json_state(const json& job) {
  const auto at = job.find("job_state");
  if (at == job.end()) return "";
  if (at->is_string()) return at->get<std::string>();
  if (!at->is_array() || at->empty()) return "";
  for (const auto& flag : *at)
    if (flag == "COMPLETING") return "COMPLETING";
  return (*at)[0].is_string() ? (*at)[0].get<std::string>() : "";
}

std::string json_text(const json& job, const char* name) {
  const auto at = job.find(name);
  return at != job.end() && at->is_string() ? at->get<std::string>() : "";
}

JobFields fields_of(const json& job) {
  JobFields f;
  f.state = json_state(job);
  f.reason = json_text(job, "state_reason");
  if (!json_unlimited(job)) f.end_time = json_time(job, "end_time");
  f.preempt_chosen = json_time(job, "preempt_time").has_value();
  f.comment = json_text(job, "comment");
  return f;
}

// squeue's question: only fields whose text Slurm writes, "|" after each
// but the Reason, none cut (size 0), times as seconds since the epoch.
constexpr const char* kSqueueFormat = "--Format=State:0|,EndTime:0|,PreemptTime:0|,Reason:0";

// A job state as Slurm names it: RUNNING, NODE_FAIL, OUT_OF_MEMORY.
bool is_state_word(std::string_view word) {
  return !word.empty() &&
         std::all_of(word.begin(), word.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

// A time squeue printed with SLURM_TIME_FORMAT=%s; nullopt for N/A, NONE,
// Unknown, NOT_SET, UNLIMITED and 0.
std::optional<std::time_t> epoch_time(std::string_view text) {
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  long long at = 0;
  for (const char c : text) at = at * 10 + (c - '0');
  if (at <= 0) return std::nullopt;
  return static_cast<std::time_t>(at);
}

// One line of squeue's answer as STATE|END|PREEMPT|REASON.
std::optional<JobFields> squeue_line_fields(std::string_view line) {
  std::string_view part[3];
  for (auto& p : part) {
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    p = line.substr(0, bar);
    line.remove_prefix(bar + 1);
  }
  if (!is_state_word(part[0])) return std::nullopt;
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  JobFields f;
  f.state = std::string(part[0]);
  f.reason = line == "(null)" ? "" : std::string(line);
  f.end_time = epoch_time(part[1]);
  f.preempt_chosen = epoch_time(part[2]).has_value();
  return f;
}

// The children's environment: the agent's, with what changes the answers'
// form set (times as epoch seconds, the C locale's messages) and the
// user's SQUEUE_* defaults (states, format, clusters) left out.
Environment command_environment() {
  auto env = Environment::from_envp(environ);
  env.unset_prefix("SQUEUE_");
  env.set("SLURM_TIME_FORMAT", "%s");
  env.set("LC_ALL", "C");
  return env;
}

bool process_has_no_json = false;  // this node's scontrol said it has no --json

}  // namespace

std::optional<JobFields> job_fields_from_json(std::string_view answer) {
  const auto first = answer.find('{'), last = answer.rfind('}');
  if (first == std::string_view::npos || last == std::string_view::npos || last < first) return std::nullopt;
  const auto doc = json_parsed(answer.substr(first, last - first + 1));
  if (!doc || !doc->is_object()) return std::nullopt;
  const auto jobs = doc->find("jobs");
  if (jobs == doc->end() || !jobs->is_array() || jobs->empty() || !(*jobs)[0].is_object()) return std::nullopt;
  try {
    return fields_of((*jobs)[0]);
  } catch (const json::exception&) {  // a field of another type than any release's
    return std::nullopt;
  }
}

std::optional<JobFields> job_fields_from_squeue(std::string_view answer) {
  while (!answer.empty()) {
    const auto end = std::min(answer.find('\n'), answer.size());
    if (auto fields = squeue_line_fields(answer.substr(0, end))) return fields;
    answer.remove_prefix(std::min(end + 1, answer.size()));
  }
  return std::nullopt;
}

// getopt's words for an option it does not know, in the C locale the
// question is asked in: "scontrol: unrecognized option '--json'".
bool scontrol_has_no_json(bool exited_ok, std::string_view answer) {
  return !exited_ok && answer.find('{') == std::string_view::npos &&
         answer.find("unrecognized option '--json'") != std::string_view::npos;
}

std::optional<std::chrono::seconds> time_left_of(const JobFields& job, std::time_t now) {
  if (!job.end_time) return std::nullopt;
  return std::chrono::seconds(std::max<long long>(0, (long long)(*job.end_time - now)));
}

bool& ShowJob::no_json() { return tools_.no_json ? *tools_.no_json : process_has_no_json; }

Status ShowJob::start(const std::string& job, std::chrono::seconds timeout) {
  job_ = job;
  timeout_ = timeout;
  return ask(!no_json());
}

Status ShowJob::ask(bool json) {
  json_ = json;
  auto argv =
      json ? std::vector<std::string>{tools_.scontrol, "--json", "show", "job", job_}
           : std::vector<std::string>{tools_.squeue, "--noheader", "--states=all", "--jobs=" + job_, kSqueueFormat};
  const auto env = command_environment();
  return command_.start(argv, timeout_, "(is slurm-client installed on node 0?)", &env, Command::StopSignals::Ignore);
}

// The fields from scontrol's JSON; else squeue is asked, for good where
// scontrol has no --json, for this question only where its JSON could not
// be read (the next asks for JSON again).
std::optional<Result<JobFields>> ShowJob::read_json(const Command::Outcome& answer) {
  if (answer.ok)
    if (auto fields = job_fields_from_json(answer.said)) return Result<JobFields>(std::move(*fields));
  if (scontrol_has_no_json(answer.ok, answer.said)) {
    no_json() = true;
  } else {
    const auto said = answer.ok ? std::string("no job's fields in its JSON")
                                : printable(answer.said.substr(0, answer.said.find('\n')), 300);
    spdlog::info("scontrol --json show job {}: {}; asking squeue", job_, said);
  }
  if (auto asked = ask(false); !asked) return Result<JobFields>(fail(asked.error()));
  return std::nullopt;
}

std::optional<Result<JobFields>> ShowJob::poll() {
  auto answer = command_.poll();
  if (!answer) return std::nullopt;
  if (answer->timed_out)
    return Result<JobFields>(fail("no answer from slurmctld within " + std::to_string(timeout_.count()) + " s"));
  if (json_) return read_json(*answer);
  if (auto fields = job_fields_from_squeue(answer->said); answer->ok && fields)
    return Result<JobFields>(std::move(*fields));
  if (answer->ok && answer->said.empty()) return Result<JobFields>(fail("squeue knows no job " + job_));
  return Result<JobFields>(
      fail("squeue: " + (answer->said.empty() ? std::string("failed") : printable(answer->said, 300))));
}

}  // namespace ddp::agent
