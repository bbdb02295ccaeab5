// One optimizer step of the image models as device work, and what the host
// learns from a step (every model's).
//
// StepProgram holds the pieces of the image models' step that the training
// loop (train/loop.cpp) calls in order, and enqueues them the same way
// whether they run at once or are recorded into a CUDA graph and replayed:
// every pointer and scalar they use is fixed for the run, and what changes
// from step to step lives in ops memory and is written just before the step
// (the rows' sample indices, the stop request; Adam counts its own steps on
// the device). On a GPU the MLP's step is a few dozen kernels of a few
// microseconds each: launched one by one the host, not the GPU, sets the
// pace; replayed as one graph it does not.
//
// StepReadback brings each step's reduced loss and stop flag to the host,
// for the image models one step late, so the host never drains the GPU
// between steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ddp/base/result.hpp"
#include "model/model.hpp"
#include "model/ops.hpp"
#include "process_group/collectives.hpp"

namespace ddp::train {

// A data split in ops memory (host for the CPU, device for CUDA).
struct DeviceSplit {
  std::size_t rows = 0;
  int width = 0;
  float* features = nullptr;
  int* labels = nullptr;     // classification
  float* targets = nullptr;  // regression
  int target_width = 0;
};

enum class OptimizerKind { sgd, adam, adadelta };
OptimizerKind optimizer_kind(const std::string& name);  // "sgd", "adam", "adadelta"

struct OptimizerState {
  OptimizerKind kind = OptimizerKind::sgd;  // SGD with momentum
  float lr = 0.0f;
  float momentum = 0.9f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float* a = nullptr;         // sgd: velocity; adam: first moment; adadelta: mean of g^2
  float* b = nullptr;         // adam: second moment; adadelta: mean of the squared updates
  int* adam_count = nullptr;  // adam: steps taken, in ops memory
  // Adadelta's, PyTorch's defaults.
  static constexpr float kRho = 0.9f, kAdadeltaEps = 1e-6f;
};

// The batch buffers a step gathers into (shared with evaluation).
struct BatchBuffers {
  float* x = nullptr;
  int* labels = nullptr;
  float* targets = nullptr;
};

// How the loop runs a step (StepProgram::begin, TrainingTask::begin_step).
struct StepWork {
  // false: a step recorded into a CUDA graph replays whole in end_step(); its
  // pieces are not called again.
  bool enqueue = true;
  int micro_batches = 1;  // forward and backward of each, the last one's all-reduced
};

class StepProgram {
 public:
  struct Shape {
    int micro = 0;        // rows per rank per micro-batch
    int accum_steps = 1;  // micro-batches per step
    float prescale = 1.0f;  // gradients are multiplied by it, then summed over ranks
    bool cuda_graph = false;
    std::uint32_t dropout_seed = 0;  // the CNN's dropout (model/kernels.hpp, dropout_scale)
  };
  StepProgram(Ops& ops, Collectives& comm, Model& model, const ParamLayout& layout, const DeviceSplit& train,
              const BatchBuffers& batch, float* grads, const OptimizerState& optimizer, Shape shape);
  ~StepProgram();  // drops the captured step: declare a StepProgram after its Collectives
  StepProgram(const StepProgram&) = delete;
  StepProgram& operator=(const StepProgram&) = delete;

  // A step over `rows` rows whose sample indices start at `indices` (ops
  // memory); `round`: the global step, which keys dropout's coins. With
  // --cuda-graph a full step is recorded at the second full step (the first
  // connects NCCL's peers and lets cuBLAS settle, outside any capture) and
  // replayed from then on; a short last step of an epoch is always enqueued.
  StepWork begin(const int* indices, std::size_t rows, bool stop_requested, long long round);
  // The pieces, in llm.c's order: zero the gradients; per micro-batch gather
  // it, forward and the loss, backward (the last one starts the all-reduce);
  // wait for the all-reduce; the optimizer. They only enqueue work, so a
  // CUDA graph can record them.
  void zero_gradients();
  void forward(int micro);
  void backward(int micro);
  Status wait_for_allreduce();
  void optimizer_update();
  // Ends a recording, and runs a recorded step (a graph is recorded, not run).
  Status end();

  // A new learning rate (the schedule's, each epoch): a captured step is
  // captured again, since it holds the rate it was recorded with.
  void set_lr(float lr);

  const float* control_slots() const;  // the reduced loss and stop flag of the newest step
  // "eager", "cuda graph (captured at the second full step)", "cuda graph
  // (captured)": for the start-up log.
  std::string describe() const;

 private:
  // The rows of one micro-batch: `rows` sample indices from `index` (ops
  // memory); `loss_weight` its share of the step's rows; `last` reduces.
  struct MicroBatch {
    const int* index = nullptr;
    int rows = 0;
    float loss_weight = 1.0f;
    bool last = false;
  };

  MicroBatch micro_batch(int micro) const;
  void gather_batch(const MicroBatch& micro);
  void loss(const MicroBatch& micro);
  Status failed(Status st);  // records a failed step (the communicator may be aborted already)

  Ops& ops_;
  Collectives& comm_;
  Model& model_;
  const ParamLayout& layout_;
  DeviceSplit train_;
  BatchBuffers batch_;
  float* grads_;
  OptimizerState opt_;
  Shape shape_;
  int* step_index_ = nullptr;     // this step's sample indices (micro x accum ints)
  float* stop_request_ = nullptr;  // 1 if this rank asks every rank to stop, else 0
  int* round_ = nullptr;           // the global step, for dropout
  int round_host_ = 0;
  std::size_t step_rows_ = 0;
  bool graph_wanted_ = false;
  bool warmed_up_ = false;
  bool captured_ = false;
  bool recording_ = false;  // this step's pieces go into the CUDA graph
  bool replaying_ = false;  // this step is the recorded graph's
  bool failed_ = false;     // a step failed: the communicator may be aborted already
};

struct StepControl {
  double loss = 0;    // the step's loss, averaged over ranks
  bool stop = false;  // some rank asked to stop (SIGUSR1) in that step
};

class StepReadback {
 public:
  // `slots`: kControlSlots floats in ops memory, reduced with the last bucket;
  // `lag`: how many steps late the host reads them, 0 or 1 (< Ops::kFences).
  StepReadback(Ops& ops, const float* slots, int lag);
  ~StepReadback();
  StepReadback(const StepReadback&) = delete;
  StepReadback& operator=(const StepReadback&) = delete;

  // Just after a step is queued: queues the copy of its slots, and returns
  // those of the step `lag` steps back, waiting for that step alone (none
  // while fewer have run).
  std::optional<StepControl> post_and_take();
  // The newest posted step's, if not taken yet (end of epoch, before evaluation).
  std::optional<StepControl> drain();

 private:
  StepControl take();

  Ops& ops_;
  const float* slots_;
  const int lag_;
  float* host_;  // Ops::kFences copies of the slots, page-locked
  long long posted_ = 0;
  long long taken_ = 0;
};

}  // namespace ddp::train
