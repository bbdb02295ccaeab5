#include "train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include "model/model.hpp"
#include "train/gpt_trainer.hpp"
#include "train/image_task.hpp"
#include "train/loop.hpp"
#include "train/metrics.hpp"
#include "train/ops_memory.hpp"
#include "train/resume.hpp"
#include "train/setup.hpp"
#include "train/worker_events.hpp"

namespace ddp::train {
namespace {

// The start-up log: the model, the ranks, the data and the buckets.
void log_start(const TrainOptions& o, const RunPlan& plan, const DataSplits& data, const Backend& b, int world) {
  spdlog::info("{} on {} rank(s) [{}], {}, lr {}, global batch {} ({} per rank x {} accumulation step(s))",
               plan.spec.describe(), world, b.comm->name(), plan.optimizer, plan.lr, o.batch_size, plan.micro,
               o.accum_steps);
  spdlog::info("data: {} ({} train rows, {} test rows); compute: {}", data.train.origin, data.train.rows,
               data.test.rows, b.ops->name());
  spdlog::debug("{}", describe_buckets(plan.layout));
}

// PyTorch's initialisation from --seed, or --init-params's file;
// start_from_rank_0() then gives every rank rank 0's.
Status upload_initial_parameters(Ops& ops, Model& model, const RunPlan& plan, const TrainOptions& o) {
  std::vector<float> init;
  if (o.init_params.empty()) {
    init = initial_parameters(plan.spec, plan.layout, o.seed);
  } else {
    std::ifstream in(o.init_params, std::ios::binary | std::ios::ate);
    if (!in) return fail("--init-params " + o.init_params + ": cannot read it");
    const auto bytes = std::size_t(in.tellg());
    if (bytes != plan.layout.parameters * sizeof(float))
      return fail("--init-params " + o.init_params + ": " + std::to_string(bytes) + " bytes, but " +
                  plan.spec.describe() + " has " + std::to_string(plan.layout.parameters) +
                  " float32 parameters (the layout --dump-params writes)");
    init.resize(plan.layout.parameters);
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(init.data()), std::streamsize(bytes)))
      return fail("--init-params " + o.init_params + ": read failed");
  }
  ops.upload(model.parameters(), init.data(), plan.layout.parameters);
  return Ok{};
}

// The image models' run (mlp, ae, linear, cnn): data, plan, ranks, backends,
// model, resume, then the training loop with their task.
int run_image_training(const TrainOptions& o, const WorkerIdentity& id) {
  auto die = [&](const std::string& message) {
    std::fprintf(stderr, "ddp-train: error (rank %d): %s\n", id.rank, message.c_str());
    return 1;
  };
  // Each step borrows from the ones before it, and locals go in reverse
  // order: the model and buffers before the backends, the backends before
  // the session whose store they use.
  auto data = load_data(o);
  if (!data) return die(data.error());
  auto planned = plan_run(o, id.world_size, data->train);
  if (!planned) return die(planned.error());
  const RunPlan& plan = *planned;
  auto joined = join_ranks(o, id, plan.fingerprint);
  if (!joined) return die(joined.error());
  std::optional<Session> session = std::move(joined).value();
  auto made = make_backend(o, id, session ? &*session : nullptr, plan.layout);
  if (!made) return die(made.error());
  Backend backend = std::move(made).value();
  if (o.cuda_graph && o.device != "cuda") return die("--cuda-graph needs --device cuda");
  log_start(o, plan, *data, backend, id.world_size);

  Model model(plan.spec, plan.layout, *backend.ops, plan.max_batch);
  const OptimizerMemory optim = alloc_optimizer_memory(*backend.ops, *backend.comm, plan.layout.total,
                                                       plan.layout.parameters, plan.optimizer != "sgd");
  if (auto st = upload_initial_parameters(*backend.ops, model, plan, o); !st) return die(st.error());
  const TrainState state =
      train_state(plan.layout.parameters, model.parameters(), plan.optimizer, optim.a.get(), optim.b.get());
  auto start = start_from_rank_0(o, id, plan, o.batch_size, session ? &*session : nullptr, backend, state);
  if (!start) return die(start.error());
  const ResumePoint from = start->value_or(ResumePoint{});
  const auto metrics = open_metrics(o, id, start->has_value());
  const auto task =
      make_image_task(o, id, plan, *data, backend, model, optim, from, start->has_value(), metrics.get());
  if (auto st = train_loop(*task, o, id, *backend.ops, from); !st) return die(st.error());
  return 0;
}

}  // namespace

int run_training(const TrainOptions& o) {
  auto identity = start_worker(o);
  if (!identity) {
    std::fprintf(stderr, "ddp-train: error: %s\n", identity.error().c_str());
    return 2;
  }
  install_preempt_handler();
  return o.model == "gpt" ? run_gpt_training(o, *identity) : run_image_training(o, *identity);
}

}  // namespace ddp::train
