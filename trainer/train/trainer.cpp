#include "train/trainer.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "data/dataset.hpp"
#include "data/sampler.hpp"
#include "dist/bootstrap.hpp"
#include "dist/cpu_collectives.hpp"
#include "gpu_backend.hpp"
#include "model/layout.hpp"
#include "model/model.hpp"
#include "train/metrics.hpp"
#include "train/snapshot.hpp"
#include "train/step.hpp"

namespace ddp::train {
namespace {

using Clock = std::chrono::steady_clock;

// SIGUSR1: the agent forwards Slurm's preemption warning (--signal=USR1@T).
// The handler only raises a flag; the step loop shares it with every rank
// through the last bucket's all-reduce, so all ranks stop at the same step.
volatile std::sig_atomic_t g_preempt_requested = 0;
extern "C" void on_sigusr1(int) { g_preempt_requested = 1; }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fmt_rate(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

DeviceSplit upload_split(Ops& ops, const Dataset& d) {
  DeviceSplit s;
  s.rows = d.rows;
  s.width = d.width;
  s.features = ops.alloc(d.features.size());
  ops.upload(s.features, d.features.data(), d.features.size());
  if (d.classes > 0) {
    s.labels = ops.alloc_int(d.rows);
    ops.upload_int(s.labels, d.labels.data(), d.rows);
  } else {
    s.target_width = d.target_width;
    s.targets = ops.alloc(d.targets.size());
    ops.upload(s.targets, d.targets.data(), d.targets.size());
  }
  return s;
}

// Fault injection for the tests, first attempt only, on the rank
// --crash-rank names (default the last): --crash-at-step SIGKILLs it (a
// death), --stall-at-step puts it to sleep for good (a hang: no progress, no
// death; the agent's --hang-timeout names it).
void inject_faults(const TrainOptions& o, const WorkerIdentity& id, long long global_step) {
  if (id.attempt != 0 || id.rank != (o.crash_rank >= 0 ? o.crash_rank : id.world_size - 1)) return;
  if (global_step == o.crash_at_step) {
    std::fprintf(stderr, "ddp-train: fault injection: rank %d kills itself with SIGKILL at step %lld\n", id.rank,
                 global_step);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
  if (global_step == o.stall_at_step) {
    std::fprintf(stderr, "ddp-train: fault injection: rank %d stops making progress at step %lld\n", id.rank,
                 global_step);
    std::fflush(stderr);
    for (;;) ::pause();
  }
}

// --ddp-hang-timeout (the agent's hang watch): DDP_PROGRESS_FILE's time is
// this rank's last progress, and the step number written in it tells the
// agent which rank is behind when every rank has stalled (file times are too
// coarse for fast steps). One pwrite per step, fixed width.
class ProgressFile {
 public:
  ProgressFile() {
    if (const char* path = std::getenv("DDP_PROGRESS_FILE")) fd_ = ::open(path, O_WRONLY | O_CLOEXEC);
  }
  ~ProgressFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ProgressFile(const ProgressFile&) = delete;
  ProgressFile& operator=(const ProgressFile&) = delete;
  void mark(long long step) const {
    if (fd_ < 0) return;
    char text[22];
    const int n = std::snprintf(text, sizeof text, "%-20lld\n", step);
    if (::pwrite(fd_, text, std::size_t(n), 0) < 0) return;  // the watch then names us: nothing better to do
  }

 private:
  int fd_ = -1;
};

void release_split(Ops& ops, DeviceSplit& s) {
  for (void* p : {static_cast<void*>(s.features), static_cast<void*>(s.labels), static_cast<void*>(s.targets)})
    if (p) ops.release(p);
}

}  // namespace

int run_training(const TrainOptions& o) {
  // ---------------------------------------------------------------- who am I
  auto identity = read_worker_identity([](const char* name) { return std::getenv(name); });
  if (!identity) {
    std::fprintf(stderr, "ddp-train: error: %s\n", identity.error().c_str());
    return 2;
  }
  const WorkerIdentity id = *identity;
  const bool lead = id.rank == 0;
  spdlog::set_pattern("ddp-train: %v");
  spdlog::set_level(lead || o.log_all_ranks ? (o.verbose ? spdlog::level::debug : spdlog::level::info)
                                            : spdlog::level::err);
  auto die = [&](const std::string& message) {
    std::fprintf(stderr, "ddp-train: error (rank %d): %s\n", id.rank, message.c_str());
    return 1;
  };
  std::signal(SIGUSR1, on_sigusr1);

  // ---------------------------------------------------------------- data and model
  auto splits = o.data == "synthetic"
                    ? Result<DataSplits>(synthetic_data(o.model, o.synthetic_train, o.synthetic_test, o.seed))
                    : load_idx_dir(o.data, o.limit_train, o.limit_test);
  if (!splits) return die(splits.error());
  const Dataset& train = splits->train;
  const Dataset& test = splits->test;
  if (o.model == "linear" && train.classes > 0)
    return die("--model linear regresses real-valued targets; use --data synthetic (IDX data has class labels)");
  if (o.model != "linear" && train.classes == 0)
    return die("--model " + o.model + " needs image data; --data synthetic with --model linear has 20 features");
  auto spec = make_model_spec(o.model, o.hidden, o.hidden_given, train.width, train.classes);
  if (!spec) return die(spec.error());
  const std::string optimizer = !o.optimizer.empty() ? o.optimizer : spec->kind == ModelKind::autoencoder ? "adam" : "sgd";
  if (optimizer != "sgd" && optimizer != "adam") return die("--optimizer " + optimizer + ": use sgd or adam");
  const float lr = o.lr > 0 ? o.lr : optimizer == "adam" ? 1e-3f : 0.05f;

  const int world = id.world_size;
  if (o.batch_size <= 0 || o.accum_steps <= 0 || o.batch_size % (world * o.accum_steps) != 0)
    return die("--batch-size " + std::to_string(o.batch_size) + " is the global batch; it must split evenly over " +
               std::to_string(world) + " rank(s) x " + std::to_string(o.accum_steps) +
               " accumulation step(s): use a multiple of " + std::to_string(world * o.accum_steps));
  const int micro = o.batch_size / (world * o.accum_steps);  // rows per rank per micro-batch
  const int eval_batch = std::max(micro, 500);
  const int max_batch = std::max(micro, eval_batch);

  const ParamLayout layout = plan_layout(spec->dims, std::size_t(o.first_bucket_mb * 1024 * 1024),
                                         std::size_t(o.bucket_mb * 1024 * 1024));
  const std::string fingerprint = spec->describe() + ", " + optimizer + ", global batch " +
                                  std::to_string(o.batch_size) + ", " + std::to_string(train.rows) +
                                  " training rows, device " + o.device + (o.shared_memory ? "" : ", --no-shm");

  // ---------------------------------------------------------------- bootstrap and backends
  std::optional<Session> session;
  if (!id.standalone()) {
    auto s = bootstrap(id, fingerprint, std::chrono::seconds(o.bootstrap_timeout_s));
    if (!s) return die(s.error());
    session = std::move(s).value();
  }
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Collectives> comm;
  if (o.device == "cpu") {
    int threads = o.threads;
    if (threads <= 0) {
      const char* omp = std::getenv("OMP_NUM_THREADS");
      threads = omp ? std::max(1, std::atoi(omp)) : 1;
    }
    ops = make_cpu_ops(threads);
    if (session) {
      auto c = make_cpu_collectives(*session, layout.total, o.shared_memory, std::chrono::seconds(o.comm_timeout_s));
      if (!c) return die(c.error());
      comm = std::move(c).value();
    } else {
      comm = make_local_collectives(*ops);
    }
  } else if (o.device == "cuda") {
    if (!session) return die("--device cuda needs the launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR, "
                             "MASTER_PORT): run it under ddp-agent --nproc 1, srun --ddp or torchrun");
    GpuBackendConfig config;
    config.local_rank = id.local_rank;
    config.local_world_size = id.local_world_size;
    config.rank = id.rank;
    config.world_size = id.world_size;
    config.store = session->store.get();
    config.store_prefix = session->key("nccl/");
    config.ops = o.nccl_ops == "nonblocking" ? NcclOps::nonblocking : NcclOps::blocking;
    config.init_timeout = std::chrono::seconds(o.bootstrap_timeout_s);
    config.op_timeout = std::chrono::seconds(o.comm_timeout_s);
    auto gpu = make_gpu_backend(config);
    if (!gpu) return die(gpu.error());
    GpuBackend backend = std::move(gpu).value();
    ops = std::move(backend.ops);
    comm = std::move(backend.comm);
  } else {
    return die("--device " + o.device + ": use cpu or cuda");
  }
  if (o.cuda_graph && o.device != "cuda") return die("--cuda-graph needs --device cuda");

  spdlog::info("{} on {} rank(s) [{}], {}, lr {}, global batch {} ({} per rank x {} accumulation step(s))",
               spec->describe(), world, comm->name(), optimizer, lr, o.batch_size, micro, o.accum_steps);
  spdlog::info("data: {} ({} train rows, {} test rows); compute: {}", train.origin, train.rows, test.rows,
               ops->name());
  spdlog::debug("{}", describe_buckets(layout));

  // ---------------------------------------------------------------- parameters, optimizer state
  Model model(*spec, layout, *ops, max_batch);
  // The flat gradient buffer: shared memory when the backend reduces in place.
  float* shared_grads = comm->gradient_memory(layout.total);
  float* grads = shared_grads ? shared_grads : ops->alloc(layout.total);
  float* opt_a = ops->alloc(layout.parameters);  // sgd: velocity; adam: first moment
  float* opt_b = optimizer == "adam" ? ops->alloc(layout.parameters) : nullptr;  // adam: second moment
  {
    const std::vector<float> init = initial_parameters(*spec, layout, o.seed);
    ops->upload(model.parameters(), init.data(), layout.parameters);
  }

  // Resume: rank 0 reads the newest complete snapshot and tells the others
  // where training stands; the state itself follows in the broadcast below.
  int start_epoch = 0;
  long long start_step_in_epoch = 0;
  long long global_step = 0;
  int adam_step = 0;
  bool resumed = false;
  std::string resume_note = "none";
  if (lead && !o.snapshot_dir.empty() && o.resume) {
    auto scan = find_newest_snapshot(o.snapshot_dir);
    if (!scan) return die(scan.error());
    for (const std::string& w : scan->warnings) spdlog::warn("warning: {}", w);
    if (scan->newest) {
      const Snapshot& snap = scan->newest->snapshot;
      const std::string& path = scan->newest->path;
      if (snap.get("model") != spec->describe() || snap.get("optimizer") != optimizer ||
          snap.get("batch_size") != std::to_string(o.batch_size))
        return die(path + " was written by a run of " + snap.get("model") + " / " + snap.get("optimizer") +
                   " / global batch " + snap.get("batch_size") + ", not " + spec->describe() + " / " + optimizer +
                   " / global batch " + std::to_string(o.batch_size) +
                   ": use another --snapshot-dir, or --no-resume to start over");
      const std::size_t expect_blobs = opt_b ? 3 : 2;
      if (snap.blobs.size() != expect_blobs || snap.blobs[0].size() != layout.parameters)
        return die(path + ": its state does not fit this model (" + std::to_string(snap.blobs.size()) + " blobs)");
      ops->upload(model.parameters(), snap.blobs[0].data(), layout.parameters);
      ops->upload(opt_a, snap.blobs[1].data(), layout.parameters);
      if (opt_b) ops->upload(opt_b, snap.blobs[2].data(), layout.parameters);
      resume_note = "epoch=" + snap.get("epoch") + " step_in_epoch=" + snap.get("step_in_epoch") +
                    " global_step=" + snap.get("global_step") + " adam_step=" + snap.get("adam_step");
      if (snap.get("world_size") != std::to_string(world))
        spdlog::warn("warning: {} was written with {} ranks, this run has {}: the order of samples within the "
                     "epoch changes, the global batch does not",
                     path, snap.get("world_size"), world);
      spdlog::info("resuming from {} (epoch {}, step {} of the epoch, global step {})", path,
                   std::stoi(snap.get("epoch")) + 1, snap.get("step_in_epoch"), snap.get("global_step"));
    }
  }
  if (session) {  // every rank learns the resume point from rank 0
    const std::string key = session->key("resume");
    if (lead) {
      if (auto st = session->store->set(key, Bytes(resume_note.begin(), resume_note.end())); !st)
        return die(st.error());
    } else {
      auto v = session->store->get(key, std::chrono::seconds(o.bootstrap_timeout_s));
      if (!v) return die(v.error());
      resume_note.assign(v->begin(), v->end());
    }
  }
  if (resume_note != "none") {
    resumed = true;
    std::sscanf(resume_note.c_str(), "epoch=%d step_in_epoch=%lld global_step=%lld adam_step=%d", &start_epoch,
                &start_step_in_epoch, &global_step, &adam_step);
  }
  // DDP's start: every rank begins from rank 0's parameters (and optimizer state).
  for (float* buffer : {model.parameters(), opt_a, opt_b})
    if (buffer)
      if (auto st = comm->broadcast(buffer, layout.parameters, 0); !st) return die(st.error());

  std::unique_ptr<MetricsFile> metrics_file;
  if (lead && !o.metrics.empty()) {
    metrics_file = std::make_unique<MetricsFile>(o.metrics, id.attempt > 0 || resumed);
    if (!metrics_file->open()) spdlog::warn("warning: {}; no metrics are written", metrics_file->error());
  }
  auto write_metrics = [&](const JsonLine& line) {
    if (metrics_file) metrics_file->write(line);
  };
  if (resumed && start_epoch >= o.epochs)
    spdlog::info("the snapshot is from the end of training ({} of {} epochs): nothing left to train; "
                 "use another --snapshot-dir or more --epochs to train further", start_epoch, o.epochs);

  // ---------------------------------------------------------------- data in ops memory
  DeviceSplit train_d = upload_split(*ops, train);
  DeviceSplit test_d = upload_split(*ops, test);
  SamplerConfig sampler{train.rows, std::uint32_t(world), std::uint32_t(id.rank), o.shuffle, o.seed, false};
  const std::size_t per_rank = distributed_indices(sampler, 0).size();
  int* epoch_index = ops->alloc_int(per_rank);
  std::vector<int> host_index(per_rank);
  // Evaluation: rank r scores test rows r, r + R, ... (no padding: each row once).
  std::vector<int> test_rows;
  for (std::size_t i = std::size_t(id.rank); i < test.rows; i += std::size_t(world)) test_rows.push_back(int(i));
  int* test_index = ops->alloc_int(std::max<std::size_t>(test_rows.size(), 1));
  if (!test_rows.empty()) ops->upload_int(test_index, test_rows.data(), test_rows.size());
  float* x = ops->alloc(std::size_t(max_batch) * train.width);
  int* y_labels = ops->alloc_int(std::size_t(max_batch));
  float* y_targets = train.target_width > 0 ? ops->alloc(std::size_t(max_batch) * train.target_width) : nullptr;
  float* eval_acc = ops->alloc(2);

  auto gather = [&](const DeviceSplit& split, const int* index, int rows) {
    ops->gather_rows(split.features, index, rows, split.width, x);
    if (split.labels) ops->gather_labels(split.labels, index, rows, y_labels);
    if (split.targets) ops->gather_rows(split.targets, index, rows, split.target_width, y_targets);
  };

  int snapshots_written = 0;
  auto save_snapshot = [&](int next_epoch, long long next_step_in_epoch, const char* why) {
    if (!lead || o.snapshot_dir.empty()) return;
    const auto t0 = Clock::now();
    Snapshot snap;
    snap.meta = {{"format", "1"},
                 {"model", spec->describe()},
                 {"optimizer", optimizer},
                 {"lr", std::to_string(lr)},
                 {"batch_size", std::to_string(o.batch_size)},
                 {"accum_steps", std::to_string(o.accum_steps)},
                 {"world_size", std::to_string(world)},
                 {"epoch", std::to_string(next_epoch)},
                 {"step_in_epoch", std::to_string(next_step_in_epoch)},
                 {"global_step", std::to_string(global_step)},
                 {"adam_step", std::to_string(adam_step)},
                 // The sampler's generator is reseeded with seed + epoch every
                 // epoch and nothing else draws random numbers after the
                 // initialisation, so seed and position are the whole RNG state.
                 {"sampler_seed", std::to_string(o.seed)},
                 {"shuffle", o.shuffle ? "1" : "0"},
                 {"data", train.origin}};
    std::vector<float> host(layout.parameters);
    ops->download(host.data(), model.parameters(), layout.parameters);
    snap.blobs.push_back(host);
    ops->download(host.data(), opt_a, layout.parameters);
    snap.blobs.push_back(host);
    if (opt_b) {
      ops->download(host.data(), opt_b, layout.parameters);
      snap.blobs.push_back(std::move(host));
    }
    const std::string name = snapshot_file_name(std::uint64_t(global_step));
    ++snapshots_written;
    const CrashPoint crash = snapshots_written != o.crash_in_snapshot ? CrashPoint::none
                             : o.crash_stage == "rename"             ? CrashPoint::before_rename
                                                                     : CrashPoint::half_written;
    if (crash != CrashPoint::none)
      std::fprintf(stderr, "ddp-train: fault injection: rank 0 is killed while writing %s (%s)\n", name.c_str(),
                   o.crash_stage.c_str());
    if (auto st = write_file_durably(o.snapshot_dir, name, encode_snapshot(snap), crash); !st) {
      spdlog::warn("warning: snapshot not saved: {}", st.error());  // training goes on; the old snapshots stay
      return;
    }
    (void)prune_snapshots(o.snapshot_dir, o.keep);
    spdlog::info("saved {}/{} ({}, {:.2f} s)", o.snapshot_dir, name, why, seconds_since(t0));
  };

  // ---------------------------------------------------------------- train
  double train_seconds = 0;
  double samples_total = 0;
  double last_loss = std::nan("");
  double test_metric = std::nan("");
  const std::size_t steps_per_epoch = (per_rank + std::size_t(micro) * o.accum_steps - 1) /
                                      (std::size_t(micro) * o.accum_steps);
  // Adam's step count lives in ops memory (Ops::adam); the host keeps its own
  // copy (adam_step) for snapshots, and both count every step.
  int* adam_count = ops->alloc_int(1);
  ops->upload_int(adam_count, &adam_step, 1);
  StepProgram program(*ops, *comm, model, layout, train_d, BatchBuffers{x, y_labels, y_targets}, grads,
                      OptimizerState{optimizer == "adam", lr, o.momentum, o.beta1, o.beta2, o.eps, opt_a, opt_b,
                                     adam_count},
                      StepProgram::Shape{micro, o.accum_steps, 1.0f / float(world),  // pre-divide, then SUM
                                         o.cuda_graph});
  StepReadback readback(*ops, program.control_slots());
  if (o.device == "cuda") spdlog::info("training steps: {}", program.describe());
  bool stop = false;
  const ProgressFile progress;
  for (int epoch = start_epoch; epoch < o.epochs && !stop; ++epoch) {
    const std::vector<std::size_t> indices = distributed_indices(sampler, std::uint64_t(epoch));
    for (std::size_t i = 0; i < per_rank; ++i) host_index[i] = int(indices[i]);
    ops->upload_int(epoch_index, host_index.data(), per_rank);
    double loss_sum = 0;
    std::size_t loss_steps = 0;
    double epoch_samples = 0;
    const auto epoch_start = Clock::now();
    const std::size_t first_step = epoch == start_epoch ? std::size_t(start_step_in_epoch) : 0;
    // What the host learns from a step arrives one step late (StepReadback):
    // a stop request seen after step s is acted on after step s + 1, on every
    // rank alike, at the position the loop has reached then.
    auto on_step_result = [&](const StepControl& result, int next_epoch, long long next_step) {
      loss_sum += result.loss;
      ++loss_steps;
      // Once stopping, a later step's request (another rank's SIGUSR1 that
      // travelled one step after the first) must not save again elsewhere.
      if (!result.stop || stop) return;
      spdlog::info("SIGUSR1 (preemption warning): saving at global step {}", global_step);
      save_snapshot(next_epoch, next_step, "on SIGUSR1");
      if (o.on_preempt == "exit") {
        spdlog::info("exiting after the snapshot (--on-preempt exit); the next run resumes from it");
        stop = true;
      }
    };
    for (std::size_t step = first_step; step < steps_per_epoch && !stop; ++step) {
      inject_faults(o, id, global_step);
      // Progress is starting a step: a rank that never starts the step the
      // others wait in is behind them (ddp-train has no stack for the agent).
      progress.mark(global_step);
      const std::size_t begin = step * std::size_t(micro) * o.accum_steps;
      const std::size_t step_rows = std::min(per_rank - begin, std::size_t(micro) * o.accum_steps);
      // A SIGUSR1 is sent with the next step, once: every rank learns of it
      // through that step's all-reduce.
      const bool stop_request = g_preempt_requested != 0;
      if (stop_request) g_preempt_requested = 0;
      if (auto st = program.run(epoch_index + begin, step_rows, stop_request); !st) return die(st.error());
      ++adam_step;
      ++global_step;
      epoch_samples += double(step_rows) * world;
      const bool last = step + 1 == steps_per_epoch;
      if (auto previous = readback.post_and_take_previous())
        on_step_result(*previous, last ? epoch + 1 : epoch, last ? 0 : (long long)(step + 1));
      if (!stop && o.save_every_steps > 0 && global_step % o.save_every_steps == 0 && !last)
        save_snapshot(epoch, (long long)(step + 1), "periodic");
    }
    if (auto newest = readback.drain()) on_step_result(*newest, epoch + 1, 0);
    if (stop) break;
    const double epoch_seconds = seconds_since(epoch_start);
    train_seconds += epoch_seconds;
    samples_total += epoch_samples;
    last_loss = loss_steps ? loss_sum / double(loss_steps) : std::nan("");

    // Evaluation on the test split, reduced over ranks.
    ops->fill(eval_acc, 0.0f, 2);
    for (std::size_t begin = 0; begin < test_rows.size(); begin += std::size_t(eval_batch)) {
      const int rows = int(std::min<std::size_t>(eval_batch, test_rows.size() - begin));
      gather(test_d, test_index + begin, rows);
      model.forward(x, rows);
      if (spec->loss == LossKind::cross_entropy)
        ops->count_correct(model.output(), y_labels, rows, spec->dims.back(), eval_acc);
      else
        ops->sum_squared_error(model.output(), spec->kind == ModelKind::autoencoder ? x : y_targets,
                               std::size_t(rows) * spec->dims.back(), eval_acc);
    }
    float counts[2];
    ops->download(counts, eval_acc, 1);
    counts[1] = float(test_rows.size());
    ops->upload(eval_acc, counts, 2);
    if (auto st = comm->allreduce_sum(eval_acc, 2); !st) return die(st.error());
    ops->download(counts, eval_acc, 2);
    test_metric = spec->loss == LossKind::cross_entropy ? counts[0] / counts[1]
                                                        : counts[0] / (counts[1] * spec->dims.back());
    const char* metric_name = spec->loss == LossKind::cross_entropy ? "test_accuracy" : "test_mse";
    const double rate = epoch_samples / epoch_seconds;
    const double eta = (o.epochs - epoch - 1) * epoch_seconds;
    spdlog::info("epoch {}/{}: loss {:.4f}, {} {:.4f}, {} samples/s, {:.2f} s, ETA {:.0f} s", epoch + 1, o.epochs,
                 last_loss, metric_name, test_metric, fmt_rate(rate), epoch_seconds, eta);
    write_metrics(JsonLine()
                      .add("event", std::string("epoch"))
                      .add("epoch", (long long)(epoch + 1))
                      .add("attempt", (long long)id.attempt)
                      .add("global_step", global_step)
                      .add("train_loss", last_loss)
                      .add(metric_name, test_metric)
                      .add("samples_per_second", rate)
                      .add("seconds", epoch_seconds));
    if (o.save_every > 0 && ((epoch + 1) % o.save_every == 0 || epoch + 1 == o.epochs))
      save_snapshot(epoch + 1, 0, "end of epoch");
  }

  if (!stop) {
    const double rate = train_seconds > 0 ? samples_total / train_seconds : 0;
    spdlog::info("done: {} epochs on {} rank(s), {:.2f} s training, {} samples/s, final loss {:.4f}, {} {:.4f}",
                 o.epochs, world, train_seconds, fmt_rate(rate), last_loss,
                 spec->loss == LossKind::cross_entropy ? "test accuracy" : "test MSE", test_metric);
    write_metrics(JsonLine()
                      .add("event", std::string("final"))
                      .add("world_size", (long long)world)
                      .add("epochs", (long long)o.epochs)
                      .add("model", spec->describe())
                      .add("attempt", (long long)id.attempt)
                      .add("resumed", (long long)resumed)
                      .add("global_step", global_step)
                      .add("train_seconds", train_seconds)
                      .add("samples_per_second", rate)
                      .add("final_train_loss", last_loss)
                      .add(spec->loss == LossKind::cross_entropy ? "test_accuracy" : "test_mse", test_metric));
    if (lead && !o.dump_params.empty()) {
      std::vector<float> host(layout.parameters);
      ops->download(host.data(), model.parameters(), layout.parameters);
      std::ofstream out(o.dump_params, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(host.data()), std::streamsize(host.size() * sizeof(float)));
      if (!out) return die("--dump-params " + o.dump_params + ": write failed");
    }
  }

  if (!shared_grads) ops->release(grads);
  for (void* p : {static_cast<void*>(opt_a), static_cast<void*>(opt_b),
                  static_cast<void*>(epoch_index), static_cast<void*>(test_index), static_cast<void*>(x),
                  static_cast<void*>(y_labels), static_cast<void*>(y_targets), static_cast<void*>(eval_acc),
                  static_cast<void*>(adam_count)})
    if (p) ops->release(p);
  release_split(*ops, train_d);
  release_split(*ops, test_d);
  return 0;
}

}  // namespace ddp::train
