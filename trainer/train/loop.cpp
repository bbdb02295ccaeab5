#include "train/loop.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <vector>

#include "ddp/wire/progress_file.hpp"
#include "train/worker_events.hpp"

namespace ddp::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_from(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Whether `step` is one of every `n`th (never when n is 0).
bool every(long long n, long long step) { return n > 0 && step % n == 0; }

// Where training goes on from `at`: after an epoch's last step, the next
// epoch's first.
ResumePoint rolled_over(const ResumePoint& at, const Schedule& s) {
  if (at.step_in_epoch < s.steps_in_epoch) return at;
  return ResumePoint{at.epoch + 1, 0, at.global_step, at.adam_step};
}

class TrainingLoop {
 public:
  TrainingLoop(TrainingTask& task, const TrainOptions& o, const WorkerIdentity& id, Ops& ops,
               const ResumePoint& start)
      : task_(task),
        o_(o),
        id_(id),
        ops_(ops),
        start_(rolled_over(start, task.schedule())),
        at_(start_),
        readback_(ops, task.control_slots(), task.schedule().result_lag),
        progress_(std::getenv("DDP_PROGRESS_FILE") ? std::getenv("DDP_PROGRESS_FILE") : "") {}
  Status run();

 private:
  void on_stop_request();
  void save(const char* why);
  Status dump_parameters();

  TrainingTask& task_;
  const TrainOptions& o_;
  const WorkerIdentity& id_;
  Ops& ops_;
  const ResumePoint start_;
  ResumePoint at_;           // the next step to run: where a snapshot taken now resumes (rolled over)
  StepReadback readback_;    // each step's loss and stop flag, Schedule::result_lag steps late
  const ProgressWriter progress_;  // DDP_PROGRESS_FILE, for the agent's hang watch
  bool stopping_ = false;    // SIGUSR1 with --on-preempt exit: stop after its snapshot
  int snapshots_written_ = 0;
};

// Every model's training: epochs of steps, each step forward, backward, the
// all-reduce and the update in that order (llm.c's), with the progress file,
// the stop request, evaluation, the log and snapshots at their points.
Status TrainingLoop::run() {
  const Schedule& s = task_.schedule();
  for (; at_.epoch < s.epochs && !stopping_; at_ = rolled_over(at_, s)) {
    task_.begin_epoch(at_.epoch);
    const auto epoch_start = Clock::now();
    while (at_.step_in_epoch < s.steps_in_epoch && !stopping_) {
      inject_faults(o_, id_, at_.global_step);
      // Starting a step is progress: a rank that never starts the step the
      // others wait in is behind them (the agent's hang watch).
      progress_.mark(std::uint64_t(at_.global_step));
      // A SIGUSR1 rides in this step's all-reduce: every rank learns of it at once.
      const StepWork work = task_.begin_step(at_, take_preempt_request());
      if (work.enqueue) {  // else --cuda-graph replays the step it recorded, in end_step()
        task_.zero_grad();
        for (int micro = 0; micro < work.micro_batches; ++micro) {
          task_.forward(micro);
          task_.backward(micro);
        }
        if (auto st = task_.all_reduce(); !st) return st;
        task_.update();
      }
      if (auto st = task_.end_step(); !st) return st;
      at_ = ResumePoint{at_.epoch, at_.step_in_epoch + 1, at_.global_step + 1, at_.adam_step + 1};
      const bool epoch_ends = at_.step_in_epoch == s.steps_in_epoch;
      // A step's loss and stop flag reach the host Schedule::result_lag steps late.
      const std::optional<StepControl> result = readback_.post_and_take();
      if (result) task_.record(*result);
      if (s.log_every > 0 && (every(s.log_every, at_.global_step) || epoch_ends)) task_.log_steps(at_.global_step);
      if (result && result->stop) on_stop_request();
      // Evaluation and snapshots inside the epoch; at its end they come below.
      if (!stopping_ && every(s.eval_every, at_.global_step) && !epoch_ends)
        if (auto st = task_.evaluate(false, at_.global_step); !st) return st;
      if (!stopping_ && every(o_.save_every_steps, at_.global_step) && !epoch_ends) save("periodic");
    }
    if (const auto newest = readback_.drain()) {  // the epoch's last step, read at once before evaluation
      task_.record(*newest);
      if (newest->stop) on_stop_request();
    }
    if (stopping_) break;
    const double epoch_seconds = seconds_from(epoch_start);
    if (auto st = task_.evaluate(true, at_.global_step); !st) return st;
    task_.report_epoch(at_.epoch, epoch_seconds, at_.global_step);
    if (o_.save_every > 0 && ((at_.epoch + 1) % o_.save_every == 0 || at_.epoch + 1 == s.epochs)) save(s.epoch_end);
  }
  if (stopping_) return Ok{};
  // Resumed at the very end (a requeue that came after the last step):
  // nothing to train, but the final report still measures the model.
  if (start_.epoch >= s.epochs)
    if (auto st = task_.evaluate(true, at_.global_step); !st) return st;
  task_.report_final(at_.global_step);
  return dump_parameters();
}

// Some rank got SIGUSR1 (Slurm's warning, --signal=USR1@T): every rank is at
// the same step, and rank 0 saves; then --on-preempt decides. A later step's
// request (another rank's SIGUSR1 one step behind) does not save again.
void TrainingLoop::on_stop_request() {
  if (stopping_) return;
  spdlog::info("SIGUSR1 (preemption warning): saving at global step {}", at_.global_step);
  save("on SIGUSR1");
  if (o_.on_preempt != "exit") return;
  spdlog::info("exiting after the snapshot ({}); the next run resumes from it",
               o_.on_preempt_given ? "--on-preempt exit" : "DDP_REQUEUE=1: --ddp-requeue requeues the job");
  stopping_ = true;
}

// Rank 0 with --snapshot-dir: the state, to resume where the loop stands.
void TrainingLoop::save(const char* why) {
  if (id_.rank != 0 || o_.snapshot_dir.empty()) return;
  ++snapshots_written_;
  const CrashPoint crash = snapshots_written_ != o_.crash_in_snapshot ? CrashPoint::none
                           : o_.crash_stage == "rename"              ? CrashPoint::before_rename
                                                                     : CrashPoint::half_written;
  save_snapshot(SnapshotTarget{o_.snapshot_dir, o_.keep, crash}, ops_, task_.state(),
                task_.snapshot_meta(rolled_over(at_, task_.schedule())), why);
}

// --dump-params: rank 0 writes the final parameters, raw float32.
Status TrainingLoop::dump_parameters() {
  if (id_.rank != 0 || o_.dump_params.empty()) return Ok{};
  const TrainState state = task_.state();
  std::vector<float> host(state.count);
  ops_.download(host.data(), state.arrays.front().data, state.count);
  std::ofstream out(o_.dump_params, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(host.data()), std::streamsize(host.size() * sizeof(float)));
  if (!out) return fail("--dump-params " + o_.dump_params + ": write failed");
  return Ok{};
}

}  // namespace

Status train_loop(TrainingTask& task, const TrainOptions& o, const WorkerIdentity& id, Ops& ops,
                  const ResumePoint& start) {
  TrainingLoop loop(task, o, id, ops, start);
  return loop.run();
}

}  // namespace ddp::train
