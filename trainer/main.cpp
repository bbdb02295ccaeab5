// ddp-train: the native C++ data-parallel trainer. Reads torchrun's worker
// environment, so it runs under srun --ddp, ddp-agent and torchrun alike.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ddp/base/version.hpp"
#include "ddp/node/limits.hpp"
#include "gpu_backend.hpp"
#include "train/options.hpp"
#include "train/trainer.hpp"

namespace {

using ddp::train::TrainOptions;

// Returns --hidden, whose count tells an empty list from none given.
CLI::Option* add_model_options(CLI::App& app, TrainOptions& o) {
  app.add_option(
         "--model", o.model,
         "mlp (classifier, cross-entropy), ae (autoencoder, MSE), linear (regression), cnn (PyTorch's "
         "MNIST example: 2 convolutions, max pooling, dropout, 2 linear layers; 28x28 images), gpt (a GPT-2-class "
         "transformer on a token file: --gpt-* options)")
      ->check(CLI::IsMember({"mlp", "ae", "linear", "cnn", "gpt"}))
      ->capture_default_str();
  auto* hidden = app.add_option("--hidden", o.hidden,
                                "hidden layer widths, comma separated (default mlp 256,128; ae 128,128,128)")
                     ->delimiter(',');
  app.add_option("--data", o.data,
                 "IDX directory (MNIST layout, e.g. /usr/share/datasets/fashion-mnist) or 'synthetic'; "
                 "--model gpt: a token file (ddp-tokenize's OUT.train.tok), or 'random' (tokens drawn from --seed, "
                 "for throughput)")
      ->capture_default_str();
  app.add_option("--limit-train", o.limit_train, "use only the first N training rows (0 = all)");
  app.add_option("--limit-test", o.limit_test, "use only the first N test rows (0 = all)");
  app.add_option("--synthetic-rows", o.synthetic_train, "training rows of --data synthetic")->capture_default_str();
  return hidden;
}

// --model gpt's shape, schedule and held-out data (train/gpt_trainer.hpp).
void add_gpt_options(CLI::App& app, TrainOptions& o) {
  app.add_option("--gpt-preset", o.gpt_preset,
                 "gpt: small (2 layers, 4 heads, width 128, context 64) or gpt2-124m (12, 12, 768, 1024, "
                 "vocabulary 50,257)")
      ->check(CLI::IsMember({"small", "gpt2-124m"}))
      ->capture_default_str();
  app.add_option("--gpt-layers", o.gpt_layers, "gpt: blocks (default: the preset's)")->check(CLI::Range(1, 1024));
  app.add_option("--gpt-heads", o.gpt_heads, "gpt: attention heads; they divide the width")->check(CLI::Range(1, 1024));
  app.add_option("--gpt-width", o.gpt_width, "gpt: the residual stream's width")->check(CLI::Range(1, 65536));
  app.add_option("--gpt-context", o.gpt_context, "gpt: tokens per sequence")->check(CLI::Range(1, 65536));
  app.add_option("--gpt-vocab", o.gpt_vocab, "gpt: vocabulary (default: the preset's, else the token file's)")
      ->check(CLI::Range(1, 65536));
  app.add_option("--steps", o.steps, "gpt: optimizer steps to train (instead of --epochs)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup-steps", o.warmup_steps, "gpt: linear warm-up of the rate (default: a tenth of --steps)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min-lr-ratio", o.min_lr_ratio, "gpt: the cosine ends at --lr times this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "gpt: AdamW's, on matrices and embeddings")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--clip-norm", o.clip_norm, "gpt: clip the gradient's global L2 norm to this (0 = off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--eval-data", o.eval_data, "gpt: a held-out token file (ddp-tokenize's OUT.val.tok)");
  app.add_option("--eval-every", o.eval_every, "gpt: steps between held-out losses (0 = at the end only)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--eval-windows", o.eval_windows, "gpt: held-out sequences scored (0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--log-every", o.log_every, "gpt: steps between loss lines")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void add_training_options(CLI::App& app, TrainOptions& o) {
  app.add_option("--epochs", o.epochs, "epochs to train")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--batch-size", o.batch_size,
                 "GLOBAL batch: split over all ranks and accumulation steps (gpt: sequences, default 16)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--accum-steps", o.accum_steps, "gradient accumulation: micro-batches per optimizer step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--optimizer", o.optimizer,
                 "sgd (with momentum), adam or adadelta (default: adam for ae, adadelta for cnn, else sgd)")
      ->check(CLI::IsMember({"sgd", "adam", "adadelta"}));
  app.add_option("--lr", o.lr, "learning rate (default: sgd 0.05, adam 0.001, adadelta 1.0)")
      ->check(CLI::PositiveNumber);
  app.add_option("--lr-gamma", o.lr_gamma,
                 "multiply the learning rate by this after each epoch (PyTorch's StepLR; default: cnn 0.7, else 1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--momentum", o.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--seed", o.seed, "initialisation, shuffling and synthetic data")->capture_default_str();
  app.add_flag("!--no-shuffle", o.shuffle, "visit the training rows in order");
}

void add_backend_options(CLI::App& app, TrainOptions& o) {
  app.add_option("--device", o.device, "cpu (OpenBLAS + Gloo) or cuda (cuBLAS + NCCL, one GPU per rank)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_flag("--cuda-graph", o.cuda_graph,
               "cuda: capture the training step into a CUDA graph once and replay it every step "
               "(fewer kernel launches: faster on one GPU, unmeasured on several; see tests/gpu/README.md)");
  app.add_option("--nccl-ops", o.nccl_ops,
                 "cuda: how collectives are issued: blocking (a blocking communicator split off the "
                 "non-blocking one NCCL starts with) or nonblocking (that one, polled)")
      ->check(CLI::IsMember({"blocking", "nonblocking"}))
      ->capture_default_str();
  app.add_option("--precision", o.precision,
                 "cuda: the linear layers' matrix products in fp32 or bf16 (tensor cores; fp32 sums, results and "
                 "master weights); auto: bf16 for --model gpt on --device cuda, else fp32 (the CPU: fp32 only)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "BLAS threads per rank (default: OMP_NUM_THREADS, else 1)");
  app.add_flag("!--no-shm", o.shared_memory,
               "reduce between the ranks of a node over Gloo TCP instead of shared memory");
  app.add_option("--first-bucket-mb", o.first_bucket_mb, "size of the first gradient bucket")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--bucket-mb", o.bucket_mb, "size of the other gradient buckets")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--bootstrap-timeout", o.bootstrap_timeout_s, "seconds to wait for every rank at start-up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--comm-timeout", o.comm_timeout_s, "seconds a collective may take before the run fails")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void add_output_options(CLI::App& app, TrainOptions& o) {
  app.add_option("--metrics", o.metrics, "JSON Lines file: one record per epoch and a final one (rank 0)");
  app.add_option("--snapshot-dir", o.snapshot_dir, "where rank 0 saves snapshots and every run resumes from");
  app.add_option("--save-every", o.save_every, "epochs between snapshots (0 = only on SIGUSR1)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--save-every-steps", o.save_every_steps, "optimizer steps between snapshots (0 = off)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--keep", o.keep, "snapshots to keep")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_flag("!--no-resume", o.resume, "start from scratch even if --snapshot-dir holds a snapshot");
  app.add_option("--on-preempt", o.on_preempt,
                 "after SIGUSR1's snapshot: continue or exit (default: exit under srun --ddp-requeue, else continue)")
      ->check(CLI::IsMember({"continue", "exit"}))
      ->capture_default_str();
  app.add_flag("--log-all-ranks", o.log_all_ranks, "log from every rank, not only rank 0");
  app.add_flag("-v,--verbose", o.verbose, "more detail (bucket layout)");
  app.add_option("--dump-params", o.dump_params, "rank 0 writes the final parameters (raw float32) to FILE");
  app.add_option("--init-params", o.init_params,
                 "start from the parameters in FILE (raw float32, in --dump-params's order) instead of --seed's");
  app.add_flag("!--no-dropout", o.dropout, "cnn: no dropout (to compare with a framework step by step)");
}

void add_testing_options(CLI::App& app, TrainOptions& o) {
  app.add_option("--crash-at-step", o.crash_at_step,
                 "testing: the rank --crash-rank (default the last) SIGKILLs itself at this global step, "
                 "first attempt only");
  app.add_option("--crash-rank", o.crash_rank, "testing: which rank --crash-at-step kills or --stall-at-step stalls");
  app.add_option("--stall-at-step", o.stall_at_step,
                 "testing: the rank --crash-rank (default the last) stops making progress (sleeps for good) at "
                 "this global step, first attempt only");
  app.add_option("--crash-in-snapshot", o.crash_in_snapshot,
                 "testing: rank 0 SIGKILLs itself while writing its N-th snapshot of this attempt");
  app.add_option("--crash-stage", o.crash_stage, "testing: where --crash-in-snapshot kills: write (half written) or "
                 "rename (written and synced, not yet renamed)")
      ->check(CLI::IsMember({"write", "rename"}));
}

}  // namespace

int main(int argc, char** argv) {
  // One Gloo socket per peer, and rank 0's store one per rank: a 1024 soft
  // limit is too few for a large job.
  ddp::raise_open_files_limit();
  TrainOptions o;
  CLI::App app{
      "ddp-train: data-parallel training in C++ (MLP, autoencoder, linear regression, CNN, GPT).\n"
      "One process per rank, started by srun --ddp, ddp-agent or torchrun (RANK, WORLD_SIZE,\n"
      "MASTER_ADDR, MASTER_PORT, ...); with none of those set it trains alone.",
      "ddp-train"};
  app.set_version_flag("--version",
                       std::string("ddp-train ") + ddp::kVersion + "\ngpu backend: " +
                           ddp::train::gpu_backend_description());
  // In this order in --help.
  CLI::Option* hidden = add_model_options(app, o);
  add_training_options(app, o);
  add_gpt_options(app, o);
  add_backend_options(app, o);
  add_output_options(app, o);
  add_testing_options(app, o);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.hidden_given = hidden->count() > 0;
  o.batch_size_given = app.count("--batch-size") > 0;
  // Under srun --ddp-requeue the agent sets DDP_REQUEUE=1: Slurm's warning
  // means the job goes back to the queue, so after the snapshot there is
  // nothing left to do here (--on-preempt continue keeps training).
  const char* requeue = std::getenv("DDP_REQUEUE");
  if (app.count("--on-preempt") == 0 && requeue && std::string(requeue) == "1") {
    o.on_preempt = "exit";
    o.on_preempt_given = false;
  }
  const char* unchecked = std::getenv("DDP_TRAIN_UNCHECKED_KERNELS");
  o.unchecked_kernels = unchecked && std::string(unchecked) == "1";
  return ddp::train::run_training(o);
}
