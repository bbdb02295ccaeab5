#include "slurm/job_fields.hpp"

#include <time.h>

#include <algorithm>
#include <cctype>

#include "ddp/base/json.hpp"

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

// A word that starts a field of the one-line form: Name=..., the name a
// letter then letters, digits and _:/ (ReqB:S:C:T, CPUs/Task), its first
// letter upper-case as every name scontrol prints is.
std::size_t key_length(std::string_view word) {
  if (word.empty() || !std::isupper(static_cast<unsigned char>(word[0]))) return 0;
  for (std::size_t i = 1; i < word.size(); ++i) {
    const auto c = static_cast<unsigned char>(word[i]);
    if (c == '=') return i;
    if (!std::isalnum(c) && c != '_' && c != ':' && c != '/') return 0;
  }
  return 0;
}

std::optional<std::time_t> text_time(const std::string& value) {
  std::tm t{};
  const char* rest = ::strptime(value.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
  if (!rest || *rest != '\0') return std::nullopt;  // Unknown, None, N/A
  t.tm_isdst = -1;
  const std::time_t at = std::mktime(&t);
  if (at == std::time_t(-1)) return std::nullopt;
  return at;
}

bool no_ask_with_json = false;  // this node's scontrol gave no JSON once: its release has none

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

std::vector<std::pair<std::string, std::string>> show_job_line_fields(std::string_view line) {
  line = line.substr(0, line.find('\n'));
  std::vector<std::pair<std::string, std::string>> fields;
  std::size_t at = 0;
  while (at < line.size()) {
    const auto end = std::min(line.find(' ', at), line.size());
    const std::string_view word = line.substr(at, end - at);
    if (const auto k = key_length(word))
      fields.emplace_back(std::string(word.substr(0, k)), std::string(word.substr(k + 1)));
    else if (!fields.empty())
      fields.back().second += " " + std::string(word);
    at = end + 1;
  }
  for (auto& [name, value] : fields)  // the separator before the next field, or the line's end
    while (!value.empty() && value.back() == ' ') value.pop_back();
  return fields;
}

JobFields job_fields_from_line(std::string_view line) {
  const auto fields = show_job_line_fields(line);
  auto value = [&](std::string_view name) -> std::string {
    for (const auto& [n, v] : fields)
      if (n == name) return v == "(null)" ? "" : v;
    return "";
  };
  JobFields f;
  f.state = value("JobState");
  f.reason = value("Reason");
  f.end_time = text_time(value("EndTime"));
  f.preempt_chosen = text_time(value("PreemptTime")).has_value();
  return f;
}

std::optional<std::chrono::seconds> time_left_of(const JobFields& job, std::time_t now) {
  if (!job.end_time) return std::nullopt;
  return std::chrono::seconds(std::max<long long>(0, (long long)(*job.end_time - now)));
}

Status ShowJob::start(const std::string& job, std::chrono::seconds timeout) {
  job_ = job;
  timeout_ = timeout;
  json_failed_ = false;
  return ask(!no_ask_with_json);
}

Status ShowJob::ask(bool json) {
  json_ = json;
  auto argv = json ? std::vector<std::string>{"scontrol", "--json", "show", "job", job_}
                   : std::vector<std::string>{"scontrol", "show", "job", "-o", job_};
  return command_.start(argv, timeout_, "(is slurm-client installed on node 0?)", nullptr,
                        Command::StopSignals::Ignore);
}

std::optional<Result<JobFields>> ShowJob::poll() {
  auto answer = command_.poll();
  if (!answer) return std::nullopt;
  if (answer->timed_out) return Result<JobFields>(fail("no answer from slurmctld within " +
                                                        std::to_string(timeout_.count()) + " s"));
  if (json_) {
    if (answer->ok)
      if (auto fields = job_fields_from_json(answer->said)) return Result<JobFields>(std::move(*fields));
    json_failed_ = true;
    if (auto asked = ask(false); !asked) return Result<JobFields>(fail(asked.error()));
    return std::nullopt;
  }
  if (!answer->ok) return Result<JobFields>(fail(answer->said.empty() ? "scontrol failed" : answer->said));
  if (json_failed_) no_ask_with_json = true;  // -o answered where --json did not
  return Result<JobFields>(job_fields_from_line(answer->said));
}

}  // namespace ddp::agent
