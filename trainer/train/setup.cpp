#include "train/setup.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

#include "gpu_backend.hpp"
#include "process_group/cpu_collectives.hpp"

namespace ddp::train {
namespace {

Result<Backend> make_cpu_backend(const TrainOptions& o, Session* session, const ParamLayout& layout) {
  int threads = o.threads;
  if (threads <= 0) {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    threads = omp ? std::max(1, std::atoi(omp)) : 1;
  }
  Backend b;
  b.ops = make_cpu_ops(threads);
  if (!session) {
    b.comm = make_local_collectives(*b.ops);
    return b;
  }
  auto c = make_cpu_collectives(*session, layout.total, o.shared_memory, std::chrono::seconds(o.comm_timeout_s));
  if (!c) return fail(c.error());
  b.comm = std::move(c).value();
  return b;
}

Result<Backend> make_cuda_backend(const TrainOptions& o, const WorkerIdentity& id, Session* session) {
  const auto matmul = matmul_precision(o);
  if (!matmul) return fail(matmul.error());
  if (!session) return fail("--device cuda needs the launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR, "
                            "MASTER_PORT): run it under ddp-agent --nproc 1, srun --ddp or torchrun");
  GpuBackendConfig config;
  config.local_rank = id.local_rank;
  config.local_world_size = id.local_world_size;
  config.rank = id.rank;
  config.world_size = id.world_size;
  config.store = session->store.get();
  config.store_prefix = session->key("nccl/");
  config.ops = o.nccl_ops == "nonblocking" ? NcclOps::nonblocking : NcclOps::blocking;
  config.matmul = *matmul;
  config.init_timeout = std::chrono::seconds(o.bootstrap_timeout_s);
  config.op_timeout = std::chrono::seconds(o.comm_timeout_s);
  auto gpu = make_gpu_backend(config);
  if (!gpu) return fail(gpu.error());
  GpuBackend backend = std::move(gpu).value();
  return Backend{std::move(backend.ops), std::move(backend.comm)};
}

}  // namespace

Result<WorkerIdentity> start_worker(const TrainOptions& o) {
  auto identity = read_worker_identity([](const char* name) { return std::getenv(name); });
  if (!identity) return identity;
  const bool lead = identity->rank == 0;
  spdlog::set_pattern("ddp-train: %v");
  spdlog::set_level(lead || o.log_all_ranks ? (o.verbose ? spdlog::level::debug : spdlog::level::info)
                                            : spdlog::level::err);
  return identity;
}

Result<DataSplits> load_data(const TrainOptions& o) {
  if (o.data == "synthetic") return synthetic_data(o.model, o.synthetic_train, o.synthetic_test, o.seed);
  if (o.data == "random")
    return fail("--data random (random tokens, for throughput) is --model gpt's; --model " + o.model +
                " takes an IDX directory or --data synthetic");
  return load_idx_dir(o.data, o.limit_train, o.limit_test);
}

Result<MatmulPrecision> matmul_precision(const TrainOptions& o) {
  const bool gpt_on_gpu = o.model == "gpt" && o.device == "cuda";
  if (o.precision == "bf16" && !gpt_on_gpu)
    return fail("--precision bf16 is --model gpt's on --device cuda; --model " + o.model + " on --device " + o.device +
                " computes in fp32: leave --precision out");
  const bool bf16 = o.precision == "bf16" || (o.precision == "auto" && gpt_on_gpu);
  return bf16 ? MatmulPrecision::bf16 : MatmulPrecision::fp32;
}

Result<RunPlan> plan_run(const TrainOptions& o, int world, const Dataset& train) {
  if (auto precision = matmul_precision(o); !precision) return fail(precision.error());
  if (o.model == "linear" && train.classes > 0)
    return fail("--model linear regresses real-valued targets; use --data synthetic (IDX data has class labels)");
  if (o.model != "linear" && train.classes == 0)
    return fail("--model " + o.model + " needs image data; --data synthetic with --model linear has 20 features");
  auto spec = make_model_spec(o.model, o.hidden, o.hidden_given, train.width, train.classes);
  if (!spec) return fail(spec.error());
  RunPlan p;
  p.spec = *spec;
  if (!o.dropout) p.spec.cnn.dropout1 = p.spec.cnn.dropout2 = 0.0f;
  if (p.spec.kind == ModelKind::cnn && o.device == "cuda" && !o.unchecked_kernels)
    return fail("--model cnn runs on --device cpu in this release: its CUDA kernels are built but not yet "
                "checked on a GPU (tests/gpu: the kit's op parity row)");
  const bool cnn = p.spec.kind == ModelKind::cnn;
  // Each model's defaults are its tutorial's: PyTorch's MNIST example trains
  // the CNN with Adadelta at lr 1.0, times 0.7 each epoch (StepLR).
  p.optimizer = !o.optimizer.empty()                       ? o.optimizer
                : cnn                                      ? "adadelta"
                : p.spec.kind == ModelKind::autoencoder    ? "adam"
                                                           : "sgd";
  if (p.optimizer != "sgd" && p.optimizer != "adam" && p.optimizer != "adadelta")
    return fail("--optimizer " + p.optimizer + ": use sgd, adam or adadelta");
  p.lr = o.lr > 0 ? o.lr : p.optimizer == "adam" ? 1e-3f : p.optimizer == "adadelta" ? 1.0f : 0.05f;
  p.lr_gamma = o.lr_gamma > 0 ? o.lr_gamma : cnn ? 0.7f : 1.0f;
  if (o.batch_size <= 0 || o.accum_steps <= 0 || o.batch_size % (world * o.accum_steps) != 0)
    return fail("--batch-size " + std::to_string(o.batch_size) + " is the global batch; it must split evenly over " +
                std::to_string(world) + " rank(s) x " + std::to_string(o.accum_steps) +
                " accumulation step(s): use a multiple of " + std::to_string(world * o.accum_steps));
  p.micro = o.batch_size / (world * o.accum_steps);
  // The CNN's activations are 160k floats a sample: evaluate at the step's size.
  p.eval_batch = cnn ? p.micro : std::max(p.micro, 500);
  p.max_batch = std::max(p.micro, p.eval_batch);
  p.layout = plan_layout(p.spec.param_layers(), std::size_t(o.first_bucket_mb * 1024 * 1024),
                         std::size_t(o.bucket_mb * 1024 * 1024));
  p.fingerprint = p.spec.describe() + ", " + p.optimizer + " lr " + std::to_string(p.lr) + " x" +
                  std::to_string(p.lr_gamma) + "/epoch, global batch " + std::to_string(o.batch_size) + ", " +
                  std::to_string(train.rows) + " training rows, device " + o.device +
                  (o.shared_memory ? "" : ", --no-shm");
  return p;
}

Result<std::optional<Session>> join_ranks(const TrainOptions& o, const WorkerIdentity& id,
                                          const std::string& fingerprint) {
  if (id.standalone()) return std::optional<Session>();
  auto s = bootstrap(id, fingerprint, std::chrono::seconds(o.bootstrap_timeout_s));
  if (!s) return fail(s.error());
  return std::optional<Session>(std::move(s).value());
}

Result<Backend> make_backend(const TrainOptions& o, const WorkerIdentity& id, Session* session,
                             const ParamLayout& layout) {
  if (o.device == "cpu") return make_cpu_backend(o, session, layout);
  if (o.device == "cuda") return make_cuda_backend(o, id, session);
  return fail("--device " + o.device + ": use cpu or cuda");
}

std::unique_ptr<MetricsFile> open_metrics(const TrainOptions& o, const WorkerIdentity& id, bool resumed) {
  if (id.rank != 0 || o.metrics.empty()) return nullptr;
  auto file = std::make_unique<MetricsFile>(o.metrics, id.attempt > 0 || resumed);
  if (!file->open()) spdlog::warn("warning: {}; no metrics are written", file->error());
  return file;
}

}  // namespace ddp::train
