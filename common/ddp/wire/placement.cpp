#include "ddp/wire/placement.hpp"

#include "ddp/base/cpu_list.hpp"
#include "ddp/base/parse.hpp"

namespace ddp {

std::string encode_placements(const std::vector<WorkerPlacement>& placements) {
  std::string text;
  for (const auto& p : placements)
    text += (text.empty() ? "" : ";") + p.gpu + "|" + p.gpu_bus_id + "|" + p.cpus + "|" + p.nic;
  return text;
}

Result<std::vector<WorkerPlacement>> decode_placements(std::string_view text) {
  std::vector<WorkerPlacement> placements;
  if (text.empty()) return placements;
  for (const auto worker : split_list(text, ';')) {
    const auto fields = split_list(worker, '|');
    if (fields.size() != 4)
      return fail("the placement '" + printable(worker, 200) + "' is not GPU|BUS_ID|CPUS|NIC");
    WorkerPlacement p{std::string(fields[0]), std::string(fields[1]), std::string(fields[2]), std::string(fields[3])};
    if (!p.cpus.empty() && !parse_cpu_list(p.cpus))
      return fail("the placement's CPU list '" + printable(p.cpus, 200) + "' is malformed");
    placements.push_back(std::move(p));
  }
  return placements;
}

std::string describe_placement(const WorkerPlacement& p) {
  std::string text = p.gpu_bus_id.empty() ? "" : "gpu " + p.gpu_bus_id + " ";
  text += p.cpus.empty() ? "cpus unbound" : "cpus " + p.cpus;
  if (!p.nic.empty()) text += " nic " + p.nic;
  return text;
}

}  // namespace ddp
