// ddp-check-config: reads the site's slurm-ddp configuration the way the
// plugin will (the plugstack lines that load it, their arguments, ddp.conf and
// its drop-ins' NodeName= lists) and checks the names against what slurmctld
// knows, so a typo is found by the admin, not by the first user's job.
//
//   ddp-check-config [--plugstack FILE] [--config FILE] [--no-slurmctld] [--strict] [--quiet]
//
// Exit: 0 no errors (warnings printed), 1 errors (or warnings with --strict),
// 2 usage. The package's postinst runs it and never fails because of it.
#include <glob.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "config_check.hpp"
#include "ddp/node/port_claim.hpp"
#include "ddp/plan/ports.hpp"
#include "hostlist.hpp"
#include "site_load.hpp"
#include "slurm.hpp"

namespace ddp::spank {
namespace {

struct Options {
  std::string plugstack;
  std::string config;
  bool no_slurmctld = false;
  bool strict = false;
  bool quiet = false;
};

struct Report {
  std::vector<Finding> findings;
  std::vector<std::string> notes;
  void add(std::vector<Finding> more) { findings.insert(findings.end(), more.begin(), more.end()); }
};

std::filesystem::path slurm_conf_path() {
  const char* env = std::getenv("SLURM_CONF");
  return env && *env ? env : "/etc/slurm/slurm.conf";
}

// Slurm's default: plugstack.conf beside slurm.conf, unless slurm.conf says
// PlugStackConfig=.
std::string default_plugstack() {
  const auto conf = slurm_conf_path();
  std::ifstream in(conf);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key(trim(std::string_view(line).substr(0, eq)));
    for (auto& c : key) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (key == "plugstackconfig") return std::string(trim(std::string_view(line).substr(eq + 1)));
  }
  return (conf.parent_path() / "plugstack.conf").string();
}

std::vector<std::string> glob_paths(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

// Every line of `file` and of what it includes, in Slurm's order.
void read_plugstack(const std::string& file, int depth, std::vector<PlugstackLine>& lines, Report& report) {
  std::ifstream in(file);
  if (!in) {  // Slurm then loads no SPANK plugin at all
    report.findings.push_back({Finding::Level::Warning, file, "cannot be read, so Slurm loads no SPANK plugin here"});
    return;
  }
  int n = 0;
  for (std::string text; std::getline(in, text);) {
    auto line = parse_plugstack_line(text, file + ":" + std::to_string(++n));
    if (!line) report.findings.push_back({Finding::Level::Warning, "", line.error()});
    if (!line || !*line) continue;
    if ((*line)->kind != PlugstackLine::Kind::Include) {
      lines.push_back(std::move(**line));
      continue;
    }
    if (depth < 8)
      for (const auto& included : glob_paths((*line)->path)) read_plugstack(included, depth + 1, lines, report);
  }
}

int print(const Report& report, const std::string& plugstack, const std::string& config, const Options& opt) {
  int errors = 0, warnings = 0;
  for (const auto& f : report.findings) {
    const bool error = f.level == Finding::Level::Error;
    (error ? errors : warnings)++;
    std::printf("%s: %s%s\n", error ? "error" : "warning", f.where.empty() ? "" : (f.where + ": ").c_str(),
                f.text.c_str());
  }
  if (!opt.quiet) {
    std::printf("read: %s (and what it includes), %s\n", plugstack.c_str(), config.c_str());
    for (const auto& n : report.notes) std::printf("%s\n", n.c_str());
    std::printf("%d error(s), %d warning(s)\n", errors, warnings);
  }
  return errors > 0 || (opt.strict && warnings > 0) ? 1 : 0;
}

// A client command's output lines; nullopt when it failed.
std::optional<std::vector<std::string>> command_lines(const char* command) {
  std::FILE* out = ::popen(command, "r");
  if (!out) return std::nullopt;
  std::vector<std::string> lines;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, out)) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return ::pclose(out) == 0 ? std::optional(lines) : std::nullopt;
}

// Partitions and nodes as slurmctld knows them, through sinfo: a client
// command, so the site's authentication and its plugins are Slurm's own
// business (a program linking libslurm would have to load them itself, and
// some need libslurmfull's symbols). nullopt (and a note) when it fails.
std::optional<SlurmView> ask_slurmctld(Report& report) {
  const auto parts = command_lines("sinfo -h -a -s -o '%R %N' 2>/dev/null");
  const auto nodes = command_lines("sinfo -h -a -N -o '%N' 2>/dev/null");
  if (!parts || !nodes) {
    report.notes.push_back("sinfo did not answer (is slurmctld up?): partition and node names not checked");
    return std::nullopt;
  }
  SlurmView view;
  for (const auto& line : *parts) {
    const auto space = line.find(' ');
    view.partitions.push_back({line.substr(0, space), space == std::string::npos ? "" : line.substr(space + 1)});
  }
  for (const auto& node : *nodes)
    if (std::find(view.nodes.begin(), view.nodes.end(), node) == view.nodes.end()) view.nodes.push_back(node);
  return view;
}

// Each partition's settings as a --ddp step there gets them (on its first node).
void describe_partitions(const SiteConfig& config, const SlurmView& view, Report& report) {
  for (const auto& p : view.partitions) {
    auto nodes = expand_hostlist(p.nodes, HostlistSource::Admin);
    const std::string node = nodes && !nodes->empty() ? nodes->front() : "";
    const auto settings = resolve_settings(config, p.name, node, hostlist_contains);
    report.notes.push_back(describe_partition(p.name, settings));
    if (settings.agent && ::access(settings.agent->c_str(), X_OK) != 0)
      report.findings.push_back({Finding::Level::Warning, "",
                                 "partition " + p.name + ": the agent " + *settings.agent +
                                     " is not an executable file on this host"});
  }
}

int run(const Options& opt) {
  Report report;
  const std::string plugstack = opt.plugstack.empty() ? default_plugstack() : opt.plugstack;
  std::vector<PlugstackLine> lines;
  read_plugstack(plugstack, 0, lines, report);
  report.add(check_plugstack(lines, [](const std::string& p) { return std::filesystem::is_regular_file(p); },
                             DDP_PLUGSTACK_INCLUDE_DIR));
  PluginArgs args;  // the first line's that parses (check_plugstack reported the others)
  for (const auto& l : lines)
    if (loads_spank_ddp(l))
      if (auto parsed = parse_plugin_args({l.args.begin(), l.args.end()})) {
        args = *parsed;
        break;
      }
  const std::string path = !opt.config.empty() ? opt.config : args.config.value_or(DDP_CONFIG_DEFAULT_PATH);
  auto loaded = load_site_config(path, !opt.config.empty() || args.config.has_value());
  if (!loaded) {
    report.findings.push_back({Finding::Level::Error, "", loaded.error()});
  } else {
    const auto config = with_plugin_settings(std::move(loaded).value(), args);
    const auto global = resolve_settings(config, "", "", [](const std::string&, const std::string&) { return false; });
    if (const auto ephemeral = kernel_ephemeral_ports())
      if (const auto overlap = ephemeral_overlap(global.port_range, *ephemeral))
        report.findings.push_back({Finding::Level::Warning, "", *overlap});
    if (!opt.no_slurmctld)
      if (const auto view = ask_slurmctld(report)) {
        report.add(check_names(config, *view, hostlist_contains));
        describe_partitions(config, *view, report);
      }
  }
  return print(report, plugstack, path, opt);
}

}  // namespace
}  // namespace ddp::spank

int main(int argc, char** argv) {
  ddp::spank::Options opt;
  CLI::App app{"Checks slurm-ddp's plugstack lines and site config (ddp.conf) as the plugin reads them"};
  app.add_option("--plugstack", opt.plugstack, "plugstack.conf to start from (default: Slurm's, beside slurm.conf)");
  app.add_option("--config", opt.config, "the site config (default: config= on the plugstack line, else " DDP_CONFIG_DEFAULT_PATH ")");
  app.add_flag("--no-slurmctld", opt.no_slurmctld, "do not ask slurmctld for the partitions and nodes");
  app.add_flag("--strict", opt.strict, "warnings count as errors (exit 1)");
  app.add_flag("-q,--quiet", opt.quiet, "print problems only");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return ddp::spank::run(opt);
}
