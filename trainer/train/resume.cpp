#include "train/resume.hpp"

#include <spdlog/spdlog.h>

#include <cstdint>

#include "train/snapshot.hpp"

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

// A snapshot resumes only a run of the same model, optimizer and global batch.
Status check_same_run(const SnapshotMeta& meta, const TrainOptions& o, const RunPlan& plan, const std::string& path) {
  const std::string model = plan.spec.describe();
  if (meta.model == model && meta.optimizer == plan.optimizer && meta.batch_size == o.batch_size) return Ok{};
  return fail(path + " was written by a run of " + meta.model + " / " + meta.optimizer + " / global batch " +
              std::to_string(meta.batch_size) + ", not " + model + " / " + plan.optimizer + " / global batch " +
              std::to_string(o.batch_size) + ": use another --snapshot-dir, or --no-resume to start over");
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

Result<std::optional<ResumePoint>> restore_newest_snapshot(const TrainOptions& o, const RunPlan& plan, int world,
                                                           Ops& ops, const TrainState& state) {
  auto scan = find_newest_snapshot(o.snapshot_dir);
  if (!scan) return fail(scan.error());
  for (const std::string& w : scan->warnings) spdlog::warn("warning: {}", w);
  if (!scan->newest) return std::optional<ResumePoint>();
  const Snapshot& snap = scan->newest->snapshot;
  const std::string& path = scan->newest->path;
  auto meta = from_meta(snap.meta, path);
  if (!meta) return fail(meta.error());
  if (Status same = check_same_run(*meta, o, plan, path); !same) return fail(same.error());
  const std::size_t parameters = plan.layout.parameters;
  const std::size_t expect_blobs = state.optimizer_b ? 3 : 2;
  if (snap.blobs.size() != expect_blobs || snap.blobs[0].size() != parameters)
    return fail(path + ": its state does not fit this model (" + std::to_string(snap.blobs.size()) + " blobs)");
  ops.upload(state.parameters, snap.blobs[0].data(), parameters);
  ops.upload(state.optimizer_a, snap.blobs[1].data(), parameters);
  if (state.optimizer_b) ops.upload(state.optimizer_b, snap.blobs[2].data(), parameters);
  if (meta->world_size != world)
    spdlog::warn("warning: {} was written with {} ranks, this run has {}: the order of samples within the "
                 "epoch changes, the global batch does not",
                 path, meta->world_size, world);
  const ResumePoint& point = meta->position;
  if (plan.spec.kind == ModelKind::gpt)  // counts steps, not epochs
    spdlog::info("resuming from {} (global step {})", path, point.global_step);
  else
    spdlog::info("resuming from {} (epoch {}, step {} of the epoch, global step {})", path, point.epoch + 1,
                 point.step_in_epoch, point.global_step);
  return std::optional<ResumePoint>(point);
}

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
                                                     const RunPlan& plan, Session* session, Backend& b,
                                                     const TrainState& state) {
  std::optional<ResumePoint> point;
  if (id.rank == 0 && !o.snapshot_dir.empty() && o.resume) {
    auto restored = restore_newest_snapshot(o, plan, id.world_size, *b.ops, state);
    if (!restored) return restored;
    point = *restored;
  }
  if (session) {
    auto shared = share_resume_point(*session, id.rank == 0, point, std::chrono::seconds(o.bootstrap_timeout_s));
    if (!shared) return shared;
    point = *shared;
  }
  for (float* buffer : {state.parameters, state.optimizer_a, state.optimizer_b})
    if (buffer)
      if (auto st = b.comm->broadcast(buffer, plan.layout.parameters, 0); !st) return fail(st.error());
  return point;
}

}  // namespace ddp::train
