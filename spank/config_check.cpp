#include "config_check.hpp"

#include <algorithm>

#include "ddp/base/parse.hpp"

namespace ddp::spank {

namespace {

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const auto start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

}  // namespace

Result<std::optional<PlugstackLine>> parse_plugstack_line(std::string_view text, std::string where) {
  if (const auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
  auto words = words_of(text);
  if (words.empty()) return std::optional<PlugstackLine>();
  PlugstackLine line;
  line.where = std::move(where);
  if (words[0] == "required")
    line.kind = PlugstackLine::Kind::Required;
  else if (words[0] == "optional")
    line.kind = PlugstackLine::Kind::Optional;
  else if (words[0] == "include")
    line.kind = PlugstackLine::Kind::Include;
  else
    return fail(line.where + ": '" + words[0] + "' is neither required, optional nor include: Slurm ignores the line");
  if (words.size() < 2) return fail(line.where + ": " + words[0] + " without a path");
  line.path = words[1];
  line.args.assign(words.begin() + 2, words.end());
  return std::optional<PlugstackLine>(std::move(line));
}

bool loads_spank_ddp(const PlugstackLine& line) {
  const auto slash = line.path.rfind('/');
  return line.kind != PlugstackLine::Kind::Include &&
         line.path.substr(slash == std::string::npos ? 0 : slash + 1) == "spank_ddp.so";
}

std::vector<Finding> check_plugstack(const std::vector<PlugstackLine>& lines,
                                     const std::function<bool(const std::string&)>& file_exists,
                                     std::string_view package_dir) {
  std::vector<Finding> out;
  std::vector<const PlugstackLine*> ours;
  for (const auto& l : lines)
    if (loads_spank_ddp(l)) ours.push_back(&l);
  if (ours.empty())
    return {{Finding::Level::Warning, "",
             "no plugstack line loads spank_ddp.so: srun and sbatch on this host do not know --ddp (install "
             "slurm-ddp, or add the line of spank-ddp(8))"}};
  if (ours.size() > 1)
    out.push_back({Finding::Level::Error, ours[1]->where,
                   "spank_ddp.so is loaded a second time (first at " + ours[0]->where +
                       "): Slurm refuses the second --ddp option; keep one line"});
  for (const auto* l : ours) {
    const bool required = l->kind == PlugstackLine::Kind::Required;
    if (!file_exists(l->path))
      out.push_back({required ? Finding::Level::Error : Finding::Level::Warning, l->where,
                     l->path + " does not exist" +
                         (required ? ": slurmd will not start and every srun fails (\"Failed to load plugin\"); "
                                     "reinstall slurm-ddp or take the line out"
                                   : ": --ddp is unknown here")});
    if (!required)
      out.push_back({Finding::Level::Warning, l->where,
                     "optional: Slurm ignores the plugin's errors, so a bad --ddp step runs without DDP instead of "
                     "stopping with its message; write required"});
    std::vector<std::string_view> args(l->args.begin(), l->args.end());
    if (auto parsed = parse_plugin_args(args); !parsed) out.push_back({Finding::Level::Error, l->where, parsed.error()});
    if (!l->where.starts_with(std::string(package_dir) + "/"))
      out.push_back({Finding::Level::Warning, l->where,
                     "this line names the plugin itself, so it outlives the package: after `apt remove slurm-ddp` "
                     "slurmd would not start; include " + std::string(package_dir) +
                         "/*.conf instead (the package's drop-in does), or take the line out before removing it"});
  }
  return out;
}

std::vector<Finding> check_names(const SiteConfig& config, const SlurmView& slurm, const NodeMatcher& matcher) {
  std::vector<Finding> out;
  std::string known;
  for (const auto& p : slurm.partitions) known += (known.empty() ? "" : ", ") + p.name;
  for (const auto& line : config.lines) {
    if (line.scope == ConfigLine::Scope::Partitions)
      for (const auto& name : line.partitions)
        if (std::none_of(slurm.partitions.begin(), slurm.partitions.end(),
                         [&](const SlurmView::Partition& p) { return p.name == name; }))
          out.push_back({Finding::Level::Warning, line.origin,
                         "PartitionName=" + name + ": Slurm has no partition of that name (it has: " + known +
                             "); the line applies to no job"});
    if (line.scope == ConfigLine::Scope::Nodes &&
        std::none_of(slurm.nodes.begin(), slurm.nodes.end(),
                     [&](const std::string& node) { return matcher(line.nodes, node); }))
      out.push_back({Finding::Level::Warning, line.origin,
                     "NodeName=" + line.nodes + " matches no node Slurm has; the line applies nowhere"});
  }
  return out;
}

std::string describe_partition(const std::string& partition, const Settings& s) {
  if (!s.enabled) return "partition " + partition + ": --ddp off (Enabled=no, " + s.enabled_origin + ")";
  return "partition " + partition + ": --ddp on; PortRange=" + std::to_string(s.port_range.first) + "-" +
         std::to_string(s.port_range.last) + " RendezvousTimeout=" + std::to_string(s.rdzv_timeout.count() / 1000) +
         " HeartbeatTimeout=" + std::to_string(s.heartbeat_timeout.count() / 1000) +
         " Requeue=" + (s.requeue ? "yes" : "no") + " JobComment=" + (s.job_comment ? "yes" : "no") + (s.env.empty() ? "" : " Env: " + std::to_string(s.env.size()));
}

}  // namespace ddp::spank
