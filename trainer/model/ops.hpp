// Ops: the arithmetic of one training step, implemented once per device.
// CpuOps (model/cpu_ops.cpp) runs on the host with OpenBLAS; CudaOps
// (cuda/cuda_ops.cu) runs on one GPU's compute stream with cuBLAS. Memory an
// Ops allocates lives where its math runs; every pointer argument below is
// such memory unless it says "host". Calls only enqueue work on the GPU:
// nothing here waits for the device except download() and synchronize().
//
// Shapes are PyTorch's: activations are [batch x features] row-major and a
// linear layer's weight is [out x in]. Counts are elements, never bytes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "ddp/base/result.hpp"
#include "model/conv_shape.hpp"

namespace ddp::train {

class Ops {
 public:
  virtual ~Ops() = default;
  virtual std::string name() const = 0;  // "cpu (OpenBLAS, 1 thread)", "cuda:0 (NVIDIA H100 ...)"

  // Memory. alloc() and alloc_int() return zero-filled buffers; release() frees either.
  virtual float* alloc(std::size_t n) = 0;
  virtual int* alloc_int(std::size_t n) = 0;
  virtual void release(void* p) = 0;
  // Page-locked host memory for control values copied back every step.
  virtual float* alloc_host(std::size_t n) = 0;
  virtual void release_host(float* p) = 0;

  // Host <-> ops memory. upload* may return before the copy is done only if the
  // source stays valid until the next synchronize(); download waits for all
  // queued work, then copies.
  virtual void upload(float* dst, const float* host_src, std::size_t n) = 0;
  virtual void upload_int(int* dst, const int* host_src, std::size_t n) = 0;
  virtual void download(float* host_dst, const float* src, std::size_t n) = 0;
  // Enqueues a copy into alloc_host() memory; valid after synchronize(), or
  // after wait_fence(f) for a fence(f) placed behind it.
  virtual void download_async(float* host_dst, const float* src, std::size_t n) = 0;
  virtual void synchronize() = 0;
  // A marker behind the work queued so far (slot < kFences), and a wait for
  // it alone: the host can wait for step s while step s + 1 is already queued.
  static constexpr int kFences = 2;
  virtual void fence(int slot) = 0;
  virtual void wait_fence(int slot) = 0;

  // Step capture (CUDA graphs): the work enqueued between begin_capture() and
  // end_capture() is recorded instead of run, and replay() runs it again with
  // the same pointers and scalars. begin_capture() returns false where a
  // backend cannot capture (the CPU), and the caller runs every step eagerly.
  virtual bool begin_capture() { return false; }
  virtual Status end_capture() { return fail("this backend cannot capture work"); }
  virtual void replay() {}
  // Frees the captured work. Before the communicator goes: NCCL counts a
  // captured collective as a reference and will not finalize a communicator
  // while a graph holding one exists.
  virtual void drop_capture() {}

  virtual void fill(float* x, float value, std::size_t n) = 0;
  virtual void copy(float* dst, const float* src, std::size_t n) = 0;
  virtual void copy_int(int* dst, const int* src, std::size_t n) = 0;
  virtual void scale(float* x, float factor, std::size_t n) = 0;
  virtual void add(float* acc, const float* x, std::size_t n) = 0;  // acc += x

  // out[i, :] = table[index[i], :] for i < count; rows of `row` floats.
  virtual void gather_rows(const float* table, const int* index, int count, int row, float* out) = 0;
  virtual void gather_labels(const int* table, const int* index, int count, int* out) = 0;

  // y = x W^T + b; b may be null (no bias), and then db too.
  virtual void linear_forward(const float* x, const float* w, const float* b, float* y, int batch, int in,
                              int out) = 0;
  // dW += dY^T X; db += column sums of dY; dX = dY W (skipped when dx is null).
  virtual void linear_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx,
                               int batch, int in, int out) = 0;
  virtual void relu_forward(const float* x, float* y, std::size_t n) = 0;
  virtual void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) = 0;

  // The CNN (model/conv_shape.hpp). Convolution: stride 1, no padding, with a
  // scratch of conv_scratch() floats (the CPU: one image's im2col columns;
  // CUDA: the batch's). Backward: dw and db accumulate, dx is overwritten
  // (skipped when null).
  virtual std::size_t conv_scratch(const ConvShape& s, int max_batch) const = 0;
  virtual void conv2d_forward(const float* x, const float* w, const float* b, float* y, float* scratch, int batch,
                              const ConvShape& s) = 0;
  virtual void conv2d_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx,
                               float* scratch, int batch, const ConvShape& s) = 0;
  // ReLU then 2x2 max pooling, stride 2, in one pass, over `planes` planes
  // of h x w; `where` keeps each positive maximum's index in its plane (-1:
  // none) for backward (model/conv_layers.hpp).
  virtual void relu_max_pool2_forward(const float* x, float* y, int* where, int planes, int h, int w) = 0;
  virtual void relu_max_pool2_backward(const float* dy, const int* where, float* dx, int planes, int h, int w) = 0;
  // y = x * mask, mask = 0 or 1 / (1 - p) per unit (model/kernels.hpp, dropout_scale).
  virtual void dropout_forward(const float* x, float* y, float* mask, int rows, int width, float p,
                               const DropoutKey& key) = 0;
  virtual void multiply(float* y, const float* a, const float* b, std::size_t n) = 0;  // y = a * b, elementwise

  // Mean softmax cross-entropy over the batch. dlogits = scale * d(loss)/d(logits);
  // *loss_acc += scale * loss (loss_acc is one float in ops memory).
  virtual void cross_entropy(const float* logits, const int* labels, float* dlogits, int batch, int classes,
                             float scale, float* loss_acc) = 0;
  // Mean squared error over n elements (PyTorch's MSELoss), same conventions.
  virtual void mse(const float* pred, const float* target, float* dpred, std::size_t n, float scale,
                   float* loss_acc) = 0;

  // Evaluation: *acc += number of rows whose arg-max equals the label;
  // *acc += sum of squared errors.
  virtual void count_correct(const float* logits, const int* labels, int batch, int classes, float* acc) = 0;
  virtual void sum_squared_error(const float* pred, const float* target, std::size_t n, float* acc) = 0;

  // The GPT (--model gpt; model/gpt_layers.hpp spells each out on the CPU,
  // the reference the CUDA kernels are checked against): B sequences of T
  // positions of C channels, N = B x T rows; tokens and targets as ints.
  // Backward functions accumulate (+=) into what they name, as gpt_layers.hpp's.
  virtual void embed_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T,
                             int C) = 0;
  virtual void embed_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C) = 0;
  virtual void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b,
                                 int N, int C) = 0;
  virtual void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                                  const float* mean, const float* rstd, int N, int C) = 0;
  // Causal attention of NH heads over qkv [B, T, 3C]. What forward keeps for
  // backward, `saved`, is attention_saved() floats: the CPU keeps every
  // probability [B, NH, T, T]; CUDA each row's log-sum-exp and a scratch row
  // [2, B, NH, T] (an online softmax: memory linear in the context), and
  // recomputes the probabilities in backward from `out`, forward's output.
  virtual std::size_t attention_saved(int B, int T, int NH) const = 0;
  virtual void attention_forward(float* out, float* saved, const float* qkv, int B, int T, int C, int NH) = 0;
  virtual void attention_backward(float* dqkv, const float* dout, const float* out, const float* qkv, float* saved,
                                  int B, int T, int C, int NH) = 0;
  virtual void gelu_forward(float* out, const float* x, std::size_t n) = 0;
  virtual void gelu_backward(float* dx, const float* x, const float* dout, std::size_t n) = 0;
  // The mean cross-entropy over the first V of Vp logits a row: *loss_acc +=
  // it; dlogits = d(mean loss)/d(logits), zero in the padded columns.
  virtual void cross_entropy_padded(const float* logits, const int* targets, float* dlogits, int N, int V, int Vp,
                                    float* loss_acc) = 0;
  // *acc += the sum of x's squares (the gradient's norm, for clipping), in
  // an order fixed by n alone: every rank gets the same clip factor.
  virtual void sum_squares(const float* x, std::size_t n, float* acc) = 0;
  // AdamW (kernels.hpp's adamw_step) on g x clip, decaying where decay[i]
  // is 1; *step counted in ops memory as adam()'s.
  virtual void adamw(float* w, float* m, float* v, const float* g, const float* decay, std::size_t n, float lr,
                     float beta1, float beta2, float eps, float weight_decay, float clip, int* step) = 0;

  // Optimizers, elementwise over flat parameter buffers (model/kernels.hpp).
  virtual void sgd_momentum(float* w, float* velocity, const float* g, std::size_t n, float lr, float momentum) = 0;
  // Adam counts its steps in ops memory: *step (one int) is incremented, then
  // step *step is applied. Kept on the device, the count needs no upload per
  // step, so a captured step replays with the right bias corrections.
  virtual void adam(float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1, float beta2,
                    float eps, int* step) = 0;
  // Adadelta: sq and acc are its two running means.
  virtual void adadelta(float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho,
                        float eps) = 0;
};

std::unique_ptr<Ops> make_cpu_ops(int threads);

// Ops memory with an owner: each buffer goes back to the Ops that allocated
// it when its owner goes, so no return path can leak it. Declare owners after
// the Ops they borrow (destroyed before it).
struct OpsRelease {
  Ops* ops = nullptr;
  void operator()(void* p) const { ops->release(p); }
};

// A buffer in ops memory (host for the CPU, device for CUDA), zero-filled.
template <class T>
using OpsArray = std::unique_ptr<T, OpsRelease>;

inline OpsArray<float> alloc_floats(Ops& ops, std::size_t n) { return {ops.alloc(n), OpsRelease{&ops}}; }
inline OpsArray<int> alloc_ints(Ops& ops, std::size_t n) { return {ops.alloc_int(n), OpsRelease{&ops}}; }

}  // namespace ddp::train
