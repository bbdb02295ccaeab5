#include "ddp/site/site_config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>

namespace ddp {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits a line into words at blanks; double quotes group blanks into a word
// and are removed ("Env=NCCL_DEBUG_SUBSYS=INIT,NET" needs none).
Result<std::vector<std::string>> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, in_word = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
      in_word = true;
    } else if (!quoted && (c == ' ' || c == '\t')) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quoted) return fail("a double quote is not closed");
  if (in_word) words.push_back(std::move(word));
  return words;
}

Result<bool> parse_bool(std::string_view value, std::string_view key) {
  if (iequals(value, "yes") || iequals(value, "true") || value == "1") return true;
  if (iequals(value, "no") || iequals(value, "false") || value == "0") return false;
  return fail(std::string(key) + "=" + std::string(value) + ": use yes or no");
}

bool valid_env_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

Result<EnvSetting> parse_env(std::string_view value, std::string_view key, bool forced) {
  const auto eq = value.find('=');
  const auto name = value.substr(0, eq);
  if (eq == std::string_view::npos || !valid_env_name(name))
    return fail(std::string(key) + "=" + std::string(value) + ": write it as " + std::string(key) +
                "=NAME=VALUE, e.g. " + std::string(key) + "=NCCL_IB_GID_INDEX=3");
  if (is_contract_variable(name))
    return fail(std::string(key) + ": " + std::string(name) +
                " belongs to the worker contract (ranks, addresses, ports); the site cannot set it");
  return EnvSetting{std::string(name), std::string(value.substr(eq + 1)), forced};
}

template <class T>
Status set_once(std::optional<T>& field, T value, std::string_view key) {
  if (field) return fail(std::string(key) + " is given twice on this line");
  field = std::move(value);
  return Ok{};
}

constexpr const char* kKnownKeys =
    "PartitionName, NodeName, Enabled, Agent, PortRange, StopGrace, RendezvousTimeout, HeartbeatTimeout, BindCpus, "
    "ExportIbHca, TopologyFile, GpuInfoDir, MasterInterface, Requeue, RequeueWait, JobComment, HangTimeout, HealthCheck, "
    "HealthCheckTimeout, BadNodeHook, Preflight, Env, ForceEnv";

Status apply_word(SettingsPatch& patch, std::string_view key, std::string_view value) {
  for (auto [name, field] : {std::pair{"Agent", &patch.agent}, std::pair{"TopologyFile", &patch.topology_file},
                             std::pair{"GpuInfoDir", &patch.gpu_info_dir},
                             std::pair{"HealthCheck", &patch.health_check},
                             std::pair{"BadNodeHook", &patch.bad_node_hook}}) {
    if (!iequals(key, name)) continue;
    if (value.empty() || value.front() != '/')
      return fail(std::string(name) + "=" + std::string(value) + ": use an absolute path");
    return set_once(*field, std::string(value), name);
  }
  if (iequals(key, "PortRange")) {
    auto range = parse_port_range(value, "PortRange");
    if (!range) return fail(range.error());
    return set_once(patch.port_range, *range, "PortRange");
  }
  for (auto [name, field, min] :
       {std::tuple{"StopGrace", &patch.stop_grace, 0}, std::tuple{"RendezvousTimeout", &patch.rdzv_timeout, 1},
        std::tuple{"HeartbeatTimeout", &patch.heartbeat_timeout, 1}, std::tuple{"RequeueWait", &patch.requeue_wait, 0},
        std::tuple{"HangTimeout", &patch.hang_timeout, 0},
        std::tuple{"HealthCheckTimeout", &patch.health_check_timeout, 1}}) {
    if (!iequals(key, name)) continue;
    auto seconds = parse_uint(value, std::uint64_t(min), 3600, name);
    if (!seconds) return fail(seconds.error() + " (seconds)");
    return set_once(*field, std::chrono::milliseconds(*seconds * 1000), name);
  }
  if (iequals(key, "MasterInterface")) {
    if (value.empty() || value.size() > 15 || value.find_first_of("/ ") != std::string_view::npos)
      return fail("MasterInterface=" + std::string(value) + ": use an interface name such as ib0");
    return set_once(patch.master_interface, std::string(value), "MasterInterface");
  }
  for (auto [name, field] : {std::pair{"Enabled", &patch.enabled}, std::pair{"BindCpus", &patch.bind_cpus}, std::pair{"ExportIbHca", &patch.export_ib_hca},
                             std::pair{"Requeue", &patch.requeue}, std::pair{"JobComment", &patch.job_comment}}) {
    if (!iequals(key, name)) continue;
    auto flag = parse_bool(value, key);
    if (!flag) return fail(flag.error());
    return set_once(*field, *flag, name);
  }
  if (iequals(key, "Preflight")) {
    const auto action = preflight_action_from(value);
    if (!action) return fail("Preflight=" + std::string(value) + ": use off, check or swap");
    return set_once(patch.preflight, *action, "Preflight");
  }
  if (iequals(key, "Env") || iequals(key, "ForceEnv")) {
    auto env = parse_env(value, iequals(key, "Env") ? "Env" : "ForceEnv", iequals(key, "ForceEnv"));
    if (!env) return fail(env.error());
    patch.env.push_back(std::move(env).value());
    return Ok{};
  }
  return fail("unknown key '" + std::string(key) + "'; known keys: " + kKnownKeys + " (see ddp.conf(5))");
}

Result<ConfigLine> parse_line(std::string_view text, std::string origin) {
  auto words = split_words(text);
  if (!words) return fail(words.error());
  ConfigLine line;
  line.origin = std::move(origin);
  for (std::size_t i = 0; i < words->size(); ++i) {
    const std::string_view word = (*words)[i];
    const auto eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) return fail("expected Key=Value, got '" + std::string(word) + "'");
    const auto key = word.substr(0, eq);
    const auto value = word.substr(eq + 1);
    if (iequals(key, "PartitionName") || iequals(key, "NodeName")) {
      if (i != 0) return fail(std::string(key) + "= must come first on its line");
      if (value.empty()) return fail(std::string(key) + "= needs a value");
      if (iequals(key, "NodeName")) {
        line.scope = ConfigLine::Scope::Nodes;
        line.nodes = std::string(value);
      } else {
        line.scope = ConfigLine::Scope::Partitions;
        for (const auto name : split_list(value)) {
          if (name.empty()) return fail("PartitionName=" + std::string(value) + " has an empty name");
          line.partitions.emplace_back(name);
        }
      }
      continue;
    }
    if (auto ok = apply_word(line.patch, key, value); !ok) return fail(ok.error());
  }
  // Off on some nodes of a step would leave the others' agents waiting for
  // peers that never come: the switch is for the whole step.
  if (line.scope == ConfigLine::Scope::Nodes && line.patch.enabled)
    return fail("Enabled= turns --ddp on or off for whole steps, so it goes on a global or a PartitionName= line, "
                "not a NodeName= line (to keep steps off some nodes, use a partition or a reservation)");
  // The Comment is the job's, written once by node 0: not a node's choice.
  if (line.scope == ConfigLine::Scope::Nodes && line.patch.job_comment)
    return fail("JobComment= is about the job's Comment, which node 0 writes once for the whole job, so it goes on a "
                "global or a PartitionName= line, not a NodeName= line");
  // Root runs it: one program for the cluster, chosen where the admin looks.
  if (line.scope != ConfigLine::Scope::Global && line.patch.bad_node_hook)
    return fail("BadNodeHook= is run as root for every step that kept a node out, so it goes on a global line only");
  if (line.scope != ConfigLine::Scope::Global && line.patch == SettingsPatch{})
    return fail("this line selects " + std::string(line.scope == ConfigLine::Scope::Nodes ? "nodes" : "partitions") +
                " but sets nothing for them");
  return line;
}

void apply(Settings& settings, const ConfigLine& line) {
  const SettingsPatch& patch = line.patch;
  if (patch.enabled) {
    settings.enabled = *patch.enabled;
    settings.enabled_origin = line.origin;
  }
  if (patch.agent) settings.agent = patch.agent;
  if (patch.port_range) settings.port_range = *patch.port_range;
  if (patch.stop_grace) settings.stop_grace = *patch.stop_grace;
  if (patch.rdzv_timeout) settings.rdzv_timeout = *patch.rdzv_timeout;
  if (patch.heartbeat_timeout) settings.heartbeat_timeout = *patch.heartbeat_timeout;
  if (patch.bind_cpus) settings.bind_cpus = *patch.bind_cpus;
  if (patch.export_ib_hca) settings.export_ib_hca = *patch.export_ib_hca;
  if (patch.requeue) settings.requeue = *patch.requeue;
  if (patch.job_comment) settings.job_comment = *patch.job_comment;
  if (patch.requeue_wait) settings.requeue_wait = *patch.requeue_wait;
  if (patch.hang_timeout) settings.hang_timeout = *patch.hang_timeout;
  if (patch.health_check) settings.health_check = *patch.health_check;
  if (patch.health_check_timeout) settings.health_check_timeout = *patch.health_check_timeout;
  if (patch.bad_node_hook) settings.bad_node_hook = *patch.bad_node_hook;
  if (patch.topology_file) settings.topology_file = *patch.topology_file;
  if (patch.gpu_info_dir) settings.gpu_info_dir = *patch.gpu_info_dir;
  if (patch.master_interface) settings.master_interface = *patch.master_interface;
  if (patch.preflight) settings.preflight = *patch.preflight;
  for (const auto& e : patch.env) {
    const auto same =
        std::find_if(settings.env.begin(), settings.env.end(), [&](const EnvSetting& s) { return s.name == e.name; });
    if (same == settings.env.end())
      settings.env.push_back(e);
    else
      *same = e;
  }
}

}  // namespace

bool is_contract_variable(std::string_view name) {
  static constexpr std::string_view owned[] = {
      "RANK",      "LOCAL_RANK", "WORLD_SIZE",      "LOCAL_WORLD_SIZE", "GROUP_RANK",  "GROUP_WORLD_SIZE",
      "ROLE_NAME", "ROLE_RANK",  "ROLE_WORLD_SIZE", "MASTER_ADDR",      "MASTER_PORT", "CUDA_VISIBLE_DEVICES"};
  return std::find(std::begin(owned), std::end(owned), name) != std::end(owned) || name.starts_with("TORCHELASTIC_") ||
         name.starts_with("DDP_PLAN_");
}

Result<SiteConfig> parse_site_config(std::string_view text, std::string_view origin) {
  SiteConfig config;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(line_no);
    auto parsed = parse_line(line, where);
    if (!parsed) return fail(where + ": " + parsed.error());
    config.lines.push_back(std::move(parsed).value());
  }
  return config;
}

Settings resolve_settings(const SiteConfig& config, const std::string& partition, const std::string& node,
                          const NodeMatcher& matcher) {
  Settings settings;
  for (const auto& line : config.lines)
    if (line.scope == ConfigLine::Scope::Global) apply(settings, line);
  for (const auto& line : config.lines)
    if (line.scope == ConfigLine::Scope::Partitions &&
        std::find(line.partitions.begin(), line.partitions.end(), partition) != line.partitions.end())
      apply(settings, line);
  for (const auto& line : config.lines)
    if (line.scope == ConfigLine::Scope::Nodes && matcher(line.nodes, node)) apply(settings, line);
  return settings;
}

std::chrono::milliseconds stop_grace_for(std::optional<std::chrono::seconds> kill_wait) {
  using std::chrono::milliseconds;
  const milliseconds wait = kill_wait.value_or(std::chrono::seconds(30));
  const milliseconds margin = std::max(milliseconds(2000), wait / 10);
  return std::clamp(wait - margin, milliseconds(1000), milliseconds(60000));
}

Result<PluginArgs> parse_plugin_args(const std::vector<std::string_view>& args) {
  PluginArgs parsed;
  for (const auto arg : args) {
    const auto eq = arg.find('=');
    const std::string where = "plugstack.conf argument '" + std::string(arg) + "'";
    if (eq == std::string_view::npos || eq == 0)
      return fail(where + ": expected agent=PATH, config=PATH or a global ddp.conf setting such as PortRange=LO-HI");
    const auto key = arg.substr(0, eq);
    const auto value = arg.substr(eq + 1);
    if (key == "agent" || key == "config") {
      if (value.empty() || value.front() != '/') return fail(where + ": use an absolute path");
      (key == "agent" ? parsed.agent : parsed.config) = std::string(value);
    } else if (iequals(key, "PartitionName") || iequals(key, "NodeName")) {
      return fail(where + ": settings for some partitions or nodes belong in the site config file (config=PATH)");
    } else if (auto ok = apply_word(parsed.settings, key, value); !ok) {
      return fail(where + ": " + ok.error());
    }
  }
  return parsed;
}

SiteConfig with_plugin_settings(SiteConfig config, const PluginArgs& args) {
  if (args.settings == SettingsPatch{}) return config;
  ConfigLine line;
  line.patch = args.settings;
  line.origin = "plugstack.conf arguments";
  config.lines.insert(config.lines.begin(), std::move(line));
  return config;
}

namespace {

constexpr std::size_t kMaxTrustedFile = 1u << 20;

std::string owner_name(uid_t owner) { return owner == 0 ? "root" : "uid " + std::to_string(owner); }

bool safe_dir(const struct stat& st, uid_t owner) {
  if (st.st_uid != 0 && st.st_uid != owner) return false;
  // Others may create entries in a sticky directory (/tmp) but not remove or
  // rename ours, and what we read lies below an entry checked to be ours.
  return !(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX);
}

// Every directory above `path`, nearest first, as the path names them.
std::vector<std::string> directories_above(const std::string& path) {
  std::vector<std::string> dirs;
  std::filesystem::path p(path);
  for (p = p.parent_path(); !p.empty(); p = p.parent_path()) {
    dirs.push_back(p.string());
    if (p == p.root_path()) break;
  }
  return dirs;
}

struct FileDescriptor {
  int fd;
  ~FileDescriptor() { ::close(fd); }
};

// The checks of read_trusted_file on an opened file's `st`.
Status check_trusted(const struct stat& st, const std::string& path, std::string_view what, uid_t owner) {
  const std::string name = std::string(what) + " " + path;
  // Through a symbolic link the file to fix is the one it leads to.
  std::string real = path;
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    real = resolved;
    std::free(resolved);
  }
  const std::string shown = real == path ? name : name + " (a link to " + real + ")";
  if ((st.st_uid != 0 && st.st_uid != owner) || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fail(shown + " must be owned by " + owner_name(owner) + " and writable only by " + owner_name(owner) +
                "; fix with: chown " + owner_name(owner) + " " + real + " && chmod go-w " + real);

  std::set<std::string> seen;
  auto dirs = directories_above(path);
  for (auto& d : directories_above(real)) dirs.push_back(std::move(d));
  for (const auto& dir : dirs) {
    if (!seen.insert(dir).second) continue;
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0)
      return fail("cannot check " + dir + " above " + name + ": " + std::strerror(errno));
    if (!safe_dir(ds, owner))
      return fail("the directory " + dir + " above " + name + " must be owned by " + owner_name(owner) +
                  " and writable only by " + owner_name(owner) + ", or whoever can write to it can replace " +
                  std::string(what) + "; fix with: chown " + owner_name(owner) + " " + dir + " && chmod go-w " + dir);
  }

  return Ok{};
}

}  // namespace

Result<std::optional<std::string>> read_trusted_file(const std::string& path, std::string_view what, uid_t owner) {
  const std::string name = std::string(what) + " " + path;
  // O_NONBLOCK: a FIFO put there must not hang slurmstepd in open().
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return fail("cannot read " + name + ": " + std::strerror(errno));
  }
  const FileDescriptor closer{raw};
  struct stat st {};
  if (::fstat(raw, &st) != 0) return fail("cannot read " + name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(name + " is not a regular file");

  if (auto trusted = check_trusted(st, path, what, owner); !trusted) return fail(trusted.error());
  if (st.st_size > off_t(kMaxTrustedFile)) return fail(name + " is larger than 1 MiB; is it the right file?");
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(raw, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, std::size_t(n));
    if (text.size() > kMaxTrustedFile) return fail(name + " is larger than 1 MiB; is it the right file?");
  }
  return std::optional<std::string>(std::move(text));
}

}  // namespace ddp
