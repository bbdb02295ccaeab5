// ddp-train's settings, filled from the command line by main.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddp::train {

struct TrainOptions {
  std::string model = "mlp";  // mlp | ae | linear | cnn | gpt
  std::vector<int> hidden;    // hidden layer widths; empty + !hidden_given = the model's default
  bool hidden_given = false;
  std::string data = "synthetic";  // an IDX directory or "synthetic"
  std::size_t limit_train = 0;     // 0 = the whole split
  std::size_t limit_test = 0;
  std::size_t synthetic_train = 16384;
  std::size_t synthetic_test = 2048;

  int epochs = 3;
  int batch_size = 128;  // global, over all ranks and accumulation steps
  bool batch_size_given = false;

  // --model gpt (train/gpt_trainer.hpp): the shape (0 = the preset's), the
  // data (--data: a token file), the schedule in optimizer steps.
  std::string gpt_preset = "small";  // small | gpt2-124m
  int gpt_layers = 0, gpt_heads = 0, gpt_width = 0, gpt_context = 0, gpt_vocab = 0;
  long long steps = 200;        // optimizer steps
  long long warmup_steps = -1;  // -1 = a tenth of --steps
  float min_lr_ratio = 0.1f;    // the cosine ends at lr x this
  float weight_decay = 0.1f;
  float clip_norm = 1.0f;    // 0 = no clipping
  std::string eval_data;     // a held-out token file (ddp-tokenize's OUT.val.tok)
  long long eval_every = 0;  // steps between held-out losses (0 = at the end only)
  int eval_windows = 256;    // held-out windows scored, over all ranks (0 = all)
  long long log_every = 10;  // steps between loss lines
  int accum_steps = 1;   // micro-batches per optimizer step (gradient accumulation)
  std::string optimizer;  // sgd | adam | adadelta; empty = the model's default (ae: adam, cnn: adadelta, else sgd)
  float lr = 0;           // 0 = default: sgd 0.05, adam 0.001, adadelta 1.0
  float lr_gamma = 0;     // 0 = default: cnn 0.7, else 1 (the rate times this after each epoch)
  float momentum = 0.9f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  std::uint64_t seed = 0;
  bool shuffle = true;

  std::string device = "cpu";  // cpu | cuda
  bool cuda_graph = false;      // cuda: capture the training step once, replay it (train/step.hpp)
  std::string nccl_ops = "blocking";  // cuda: blocking | nonblocking (gpu_backend.hpp, NcclOps)
  std::string precision = "auto";     // the linear layers' products: auto | fp32 | bf16 (matmul_precision())
  int threads = 0;             // BLAS threads per worker; 0 = OMP_NUM_THREADS or 1
  bool shared_memory = true;  // reduce between a node's ranks in shared memory
  double first_bucket_mb = 1.0;
  double bucket_mb = 25.0;
  int bootstrap_timeout_s = 120;
  int comm_timeout_s = 300;

  std::string metrics;       // JSON Lines file, written by rank 0
  std::string snapshot_dir;  // empty = no snapshots
  int save_every = 1;        // epochs between snapshots
  int save_every_steps = 0;  // optimizer steps between snapshots (0 = off)
  int keep = 3;              // snapshots kept
  bool resume = true;
  std::string on_preempt = "continue";  // SIGUSR1: save, then continue | exit
  bool on_preempt_given = true;         // false: "exit" came from DDP_REQUEUE=1 (--ddp-requeue)

  bool log_all_ranks = false;
  bool verbose = false;
  std::string dump_params;  // rank 0 writes the final flat parameters (raw float32) here
  std::string init_params;  // start from these flat parameters (raw float32, dump_params's layout)
  bool dropout = true;      // cnn: false turns its dropout off (PyTorch parity runs)
  long long crash_at_step = -1;  // fault injection for tests: SIGKILL this rank at that step, first attempt only
  int crash_rank = -1;           // the rank --crash-at-step kills (-1 = the last rank)
  long long stall_at_step = -1;  // fault injection for tests: that rank sleeps for good at that step (a hang)
  int crash_in_snapshot = 0;     // testing: rank 0 SIGKILLs itself while writing its N-th snapshot
  std::string crash_stage = "write";  // ... half-way through the write, or "rename": synced, before the rename
  // The GPU kit's (tests/gpu/README.md), from DDP_TRAIN_UNCHECKED_KERNELS=1:
  // --device cuda with models whose CUDA kernels have not yet passed the
  // kit's op parity row on a GPU (cnn, gpt), so that one kit run can check
  // them whole right after that row.
  bool unchecked_kernels = false;
};

}  // namespace ddp::train
