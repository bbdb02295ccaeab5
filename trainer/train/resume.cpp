#include "train/resume.hpp"

#include <spdlog/spdlog.h>

#include <cstdint>

namespace ddp::train {
namespace {

void put_u64(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(std::uint8_t(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::vector<char> encode_resume_point(const std::optional<ResumePoint>& point) {
  std::vector<char> out;
  if (!point) return out;
  for (const long long v : {(long long)point->epoch, point->step_in_epoch, point->global_step,
                            (long long)point->adam_step})
    put_u64(out, std::uint64_t(v));
  return out;
}

Result<std::optional<ResumePoint>> decode_resume_point(const std::vector<char>& bytes) {
  if (bytes.empty()) return std::optional<ResumePoint>();
  if (bytes.size() != 32)
    return fail("rank 0 sent a resume point of " + std::to_string(bytes.size()) +
                " bytes, not 32: run the same ddp-train build on every rank");
  const auto at = [&](int i) { return (long long)get_u64(bytes.data() + 8 * i); };
  return std::optional<ResumePoint>(ResumePoint{int(at(0)), at(1), at(2), int(at(3))});
}

namespace {

// Rank 0: the newest snapshot a run like this one wrote, into `state`.
Result<std::optional<ResumePoint>> restore_on_rank_0(const std::string& dir, const RunPlan& plan, int batch_size,
                                                     int world, Ops& ops, const TrainState& state) {
  SnapshotMeta run;  // what a snapshot must share with this run
  run.model = plan.spec.describe();
  run.optimizer = plan.optimizer;
  run.batch_size = batch_size;
  run.world_size = world;
  auto restored = restore_snapshot(dir, run, ops, state);
  if (!restored) return fail(restored.error());
  if (!*restored) return std::optional<ResumePoint>();
  const ResumePoint& point = (*restored)->meta.position;
  if (plan.spec.kind == ModelKind::gpt)  // counts steps, not epochs
    spdlog::info("resuming from {} (global step {})", (*restored)->path, point.global_step);
  else
    spdlog::info("resuming from {} (epoch {}, step {} of the epoch, global step {})", (*restored)->path,
                 point.epoch + 1, point.step_in_epoch, point.global_step);
  return std::optional<ResumePoint>(point);
}

}  // namespace

Result<std::optional<ResumePoint>> share_resume_point(Session& session, bool lead,
                                                      const std::optional<ResumePoint>& mine,
                                                      std::chrono::seconds timeout) {
  const std::string key = session.key("resume");
  if (lead) {
    if (auto st = session.store->set(key, encode_resume_point(mine)); !st) return fail(st.error());
    return mine;
  }
  auto bytes = session.store->get(key, timeout);
  if (!bytes) return fail(bytes.error());
  return decode_resume_point(*bytes);
}

Result<std::optional<ResumePoint>> start_from_rank_0(const TrainOptions& o, const WorkerIdentity& id,
                                                     const RunPlan& plan, int batch_size, Session* session,
                                                     Backend& b, const TrainState& state) {
  std::optional<ResumePoint> point;
  if (id.rank == 0 && !o.snapshot_dir.empty() && o.resume) {
    auto restored = restore_on_rank_0(o.snapshot_dir, plan, batch_size, id.world_size, *b.ops, state);
    if (!restored) return restored;
    point = *restored;
  }
  if (session) {
    auto shared = share_resume_point(*session, id.rank == 0, point, std::chrono::seconds(o.bootstrap_timeout_s));
    if (!shared) return shared;
    point = *shared;
  }
  for (const StateArray& array : state.arrays)
    if (auto st = b.comm->broadcast(array.data, state.count, 0); !st) return fail(st.error());
  return point;
}

}  // namespace ddp::train
