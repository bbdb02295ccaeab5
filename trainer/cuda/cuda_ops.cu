// CudaOps: the arithmetic of a training step on one GPU (llm.c style: one small kernel per operation, cuBLAS for the
// matrix products). Every call only enqueues work on the compute stream of the CudaContext; nothing waits for the GPU
// except download() and synchronize(). Elementwise math: model/kernels.hpp's, which the CPU backend runs too.
//
// Layouts: the Ops interface is row-major (PyTorch's); cuBLAS is column-major. A row-major [r x c] matrix in memory
// IS the column-major [c x r] matrix, its transpose, with leading dimension c. So each product below is written for
// the transposes, and the comments spell out the mapping.
#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/cnn_kernels.cuh"
#include "cuda/cuda_context.cuh"
#include "cuda/cuda_ops.hpp"
#include "cuda/gemm.cuh"
#include "cuda/gpt_kernels.cuh"
#include "cuda/grid.cuh"
#include "cuda/optimizer_kernels.cuh"
#include "model/kernels.hpp"

namespace ddp::train::cuda {
namespace {

// Blocks for a reduction into one float: each block adds its partial sum
// with one float atomicAdd, so fewer blocks mean fewer roundings of the total.
unsigned reduce_blocks_for(std::size_t n) { return std::min(blocks_for(n), 1024u); }

// The sum of v over the block, valid in thread 0. Every thread of the block
// must call it (no early return before it), once per kernel.
__device__ double block_sum(double v) {
  __shared__ double warp_sums[32];  // at most 1024 threads = 32 warps
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = 0.0;
  if (warp == 0) {
    if (lane < int(blockDim.x / 32)) v = warp_sums[lane];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

// ---------------------------------------------------------------------------
// Kernels

__global__ void fill_kernel(float* x, float value, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) x[i] = value;
}

__global__ void scale_kernel(float* x, float factor, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) x[i] *= factor;
}

__global__ void add_kernel(float* acc, const float* x, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) acc[i] += x[i];
}

// One thread per output float: consecutive threads copy consecutive floats of
// a row, so the reads and writes coalesce.
__global__ void gather_rows_kernel(const float* table, const int* index, int count, int row, float* out) {
  const std::size_t n = std::size_t(count) * row;
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const std::size_t r = i / row;
    const std::size_t c = i % row;
    out[i] = table[std::size_t(index[r]) * row + c];
  }
}

__global__ void gather_labels_kernel(const int* table, const int* index, int count, int* out) {
  for (std::size_t i = first_index(); i < std::size_t(count); i += index_stride()) out[i] = table[index[i]];
}

// y[r, :] = b for every row; the product is then accumulated on top (beta = 1).
__global__ void broadcast_bias_kernel(const float* b, float* y, int batch, int out) {
  const std::size_t n = std::size_t(batch) * out;
  for (std::size_t i = first_index(); i < n; i += index_stride()) y[i] = b[i % out];
}

// db[o] += sum over rows of dy[r, o]. One thread per column: neighbouring
// threads read neighbouring floats of each row (coalesced), and each column
// is summed in row order like the CPU, with no atomics (deterministic).
__global__ void column_sum_kernel(const float* dy, float* db, int batch, int out) {
  for (std::size_t o = first_index(); o < std::size_t(out); o += index_stride()) {
    float sum = 0.0f;
    for (int r = 0; r < batch; ++r) sum += dy[std::size_t(r) * out + o];
    db[o] += sum;
  }
}

__global__ void relu_forward_kernel(const float* x, float* y, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) y[i] = relu(x[i]);
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) dx[i] = ddp::train::relu_backward(y[i], dy[i]);
}

// One thread per row (the class count is small: 10 for Fashion-MNIST). Each
// block sums its rows' losses in double, then adds one float to *loss_acc.
__global__ void cross_entropy_kernel(const float* logits, const int* labels, float* dlogits, int batch, int classes,
                                     float scale, float* loss_acc) {
  double loss = 0.0;
  for (std::size_t r = first_index(); r < std::size_t(batch); r += index_stride()) {
    const float* z = logits + r * classes;
    float* d = dlogits + r * classes;
    loss += cross_entropy_row(z, labels[r], classes, batch, d);
    if (scale != 1.0f)  // as the CPU backend does: scale the finished gradient in float
      for (int c = 0; c < classes; ++c) d[c] *= scale;
  }
  loss = block_sum(loss);
  if (threadIdx.x == 0 && loss != 0.0) atomicAdd(loss_acc, float(double(scale) * loss / batch));
}

// PyTorch's MSELoss: mean over all n elements; d/dpred = 2 (pred - target) / n.
__global__ void mse_kernel(const float* pred, const float* target, float* dpred, std::size_t n, float scale,
                           float* loss_acc) {
  double loss = 0.0;
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const double diff = double(pred[i]) - target[i];
    loss += diff * diff;
    dpred[i] = float(2.0 * diff / double(n)) * scale;
  }
  loss = block_sum(loss);
  if (threadIdx.x == 0 && loss != 0.0) atomicAdd(loss_acc, float(double(scale) * loss / double(n)));
}

__global__ void count_correct_kernel(const float* logits, const int* labels, int batch, int classes, float* acc) {
  double correct = 0.0;
  for (std::size_t r = first_index(); r < std::size_t(batch); r += index_stride())
    if (argmax_row(logits + r * classes, classes) == labels[r]) correct += 1.0;
  correct = block_sum(correct);
  if (threadIdx.x == 0 && correct != 0.0) atomicAdd(acc, float(correct));
}

__global__ void sum_squared_error_kernel(const float* pred, const float* target, std::size_t n, float* acc) {
  double sum = 0.0;
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const double diff = pred[i] - target[i];  // float difference, as the CPU backend computes it
    sum += diff * diff;
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0 && sum != 0.0) atomicAdd(acc, float(sum));
}

// ---------------------------------------------------------------------------

class CudaOps final : public Ops {
 public:
  CudaOps(std::shared_ptr<CudaContext> context, MatmulPrecision matmul)
      : ctx_(std::move(context)), stream_(ctx_->stream), gemm_(ctx_->cublas, stream_, matmul) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ctx_->device));
    char bus_id[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ctx_->device));
    name_ = "cuda:" + std::to_string(ctx_->device) + " (" + prop.name + ", PCI " + bus_id + ", " +
            std::to_string(prop.totalGlobalMem >> 30) + " GiB, sm_" + std::to_string(prop.major) +
            std::to_string(prop.minor) + "), matrix products in " +
            (matmul == MatmulPrecision::bf16 ? "bf16 (fp32 sums and weights)" : "fp32");
  }

  ~CudaOps() override {
    // Best effort, as in ~CudaContext: nobody to report to.
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    for (cudaEvent_t event : fences_)
      if (event) cudaEventDestroy(event);
    if (adam_bias_) cudaFree(adam_bias_);
  }
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  std::string name() const override { return name_; }

  // Zero-filled on the compute stream, so every later use (all on that
  // stream, or ordered after it by an event) sees the zeros.
  float* alloc(std::size_t n) override { return static_cast<float*>(zeroed(n * sizeof(float))); }
  int* alloc_int(std::size_t n) override { return static_cast<int*>(zeroed(n * sizeof(int))); }
  void release(void* p) override { CUDA_CHECK(cudaFree(p)); }  // cudaFree waits for work using p

  float* alloc_host(std::size_t n) override {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, std::max<std::size_t>(n, 1) * sizeof(float)));  // page-locked: async copies
    std::fill_n(static_cast<float*>(p), n, 0.0f);
    return static_cast<float*>(p);
  }
  void release_host(float* p) override { CUDA_CHECK(cudaFreeHost(p)); }

  // Uploads go through the compute stream, not cudaMemcpy: the legacy default
  // stream does not wait for a non-blocking stream, so a plain cudaMemcpy
  // could land before the zero-fill of alloc() that is still queued there.
  // Waiting afterwards lets the caller reuse its (pageable) buffer at once.
  void upload(float* dst, const float* host_src, std::size_t n) override {
    upload_bytes(dst, host_src, n * sizeof(float));
  }
  void upload_int(int* dst, const int* host_src, std::size_t n) override {
    upload_bytes(dst, host_src, n * sizeof(int));
  }

  void download(float* host_dst, const float* src, std::size_t n) override {
    if (n == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(host_dst, src, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void download_async(float* host_dst, const float* src, std::size_t n) override {
    if (n == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(host_dst, src, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  }
  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void fence(int slot) override { CUDA_CHECK(cudaEventRecord(fence_event(slot), stream_)); }
  void wait_fence(int slot) override { CUDA_CHECK(cudaEventSynchronize(fence_event(slot))); }

  // Thread-local capture mode: the NCCL watchdog thread keeps querying its
  // events meanwhile, which the global mode would forbid (and the capture
  // would be invalidated by it).
  bool begin_capture() override {
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    return true;
  }
  Status end_capture() override {
    cudaGraph_t graph = nullptr;
    CUDA_TRY(cudaStreamEndCapture(stream_, &graph));
    const cudaError_t made = cudaGraphInstantiate(&graph_exec_, graph, 0);
    cudaGraphDestroy(graph);  // the executable graph keeps what it needs
    if (made != cudaSuccess) return fail(cuda_error_text(made, "cudaGraphInstantiate", __FILE__, __LINE__));
    return Ok{};
  }
  void replay() override { CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_)); }
  void drop_capture() override {
    if (!graph_exec_) return;
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // no replay may still run
    CUDA_CHECK(cudaGraphExecDestroy(graph_exec_));
    graph_exec_ = nullptr;
  }

  void fill(float* x, float value, std::size_t n) override {
    if (n == 0) return;
    fill_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(x, value, n);
    CUDA_CHECK_LAUNCH();
  }
  void copy(float* dst, const float* src, std::size_t n) override {
    if (n == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  }
  void copy_int(int* dst, const int* src, std::size_t n) override {
    if (n == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(int), cudaMemcpyDeviceToDevice, stream_));
  }
  void scale(float* x, float factor, std::size_t n) override {
    if (n == 0) return;
    scale_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(x, factor, n);
    CUDA_CHECK_LAUNCH();
  }
  void add(float* acc, const float* x, std::size_t n) override {
    if (n == 0) return;
    add_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(acc, x, n);
    CUDA_CHECK_LAUNCH();
  }

  void gather_rows(const float* table, const int* index, int count, int row, float* out) override {
    const std::size_t n = std::size_t(count) * row;
    if (count <= 0 || row <= 0) return;
    gather_rows_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(table, index, count, row, out);
    CUDA_CHECK_LAUNCH();
  }
  void gather_labels(const int* table, const int* index, int count, int* out) override {
    if (count <= 0) return;
    gather_labels_kernel<<<blocks_for(count), kThreads, 0, stream_>>>(table, index, count, out);
    CUDA_CHECK_LAUNCH();
  }

  // y[B x out] = x[B x in] W^T + b, W[out x in].
  // Column-major view: y^T[out x B] = W[out x in] x^T[in x B], where
  //   W   is stored as column-major W^T [in x out], ld = in  -> op T gives W,
  //   x^T is stored as column-major     [in x B],   ld = in  -> op N,
  //   y^T is stored as column-major     [out x B],  ld = out.
  void linear_forward(const float* x, const float* w, const float* b, float* y, int batch, int in, int out) override {
    if (batch <= 0 || out <= 0) return;
    const std::size_t n = std::size_t(batch) * out;
    if (b) broadcast_bias_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(b, y, batch, out);
    CUDA_CHECK_LAUNCH();
    // No bias (the GPT's head): beta 0 overwrites y.
    gemm_.run(CUBLAS_OP_T, CUBLAS_OP_N, out, batch, in, w, in, x, in, b ? 1.0f : 0.0f, y, out);
  }

  void linear_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx, int batch,
                       int in, int out) override {
    if (batch <= 0 || out <= 0 || in <= 0) return;
    // dW[out x in] += dY^T X. Column-major view: dW^T[in x out] += X^T[in x B] dY[B x out], where
    //   X^T is x as stored, column-major [in x B], ld = in   -> op N,
    //   dY  is dy stored as column-major dY^T [out x B], ld = out -> op T,
    //   dW^T is dw as stored, column-major [in x out], ld = in; beta = 1 accumulates.
    gemm_.run(CUBLAS_OP_N, CUBLAS_OP_T, in, out, batch, x, in, dy, out, 1.0f, dw, in);
    // db[out] += column sums of dY (none without a bias).
    if (db) column_sum_kernel<<<blocks_for(out), kThreads, 0, stream_>>>(dy, db, batch, out);
    CUDA_CHECK_LAUNCH();
    // dX[B x in] = dY W. Column-major view: dX^T[in x B] = W^T[in x out] dY^T[out x B], where
    //   W^T is w as stored, column-major [in x out], ld = in  -> op N,
    //   dY^T is dy as stored, column-major [out x B], ld = out -> op N,
    //   dX^T is dx as stored, column-major [in x B], ld = in; beta = 0 overwrites.
    if (dx) gemm_.run(CUBLAS_OP_N, CUBLAS_OP_N, in, batch, out, w, in, dy, out, 0.0f, dx, in);
  }

  // The CNN's: cuda/cnn_kernels.cu.
  std::size_t conv_scratch(const ConvShape& s, int max_batch) const override { return cuda::conv_scratch(s, max_batch); }
  void conv2d_forward(const float* x, const float* w, const float* b, float* y, float* scratch, int batch,
                      const ConvShape& s) override {
    cuda::conv2d_forward(stream_, ctx_->cublas, x, w, b, y, scratch, batch, s);
  }
  void conv2d_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx,
                       float* scratch, int batch, const ConvShape& s) override {
    cuda::conv2d_backward(stream_, ctx_->cublas, x, w, dy, dw, db, dx, scratch, batch, s);
  }
  void relu_max_pool2_forward(const float* x, float* y, int* where, int planes, int h, int w) override {
    cuda::relu_max_pool2_forward(stream_, x, y, where, planes, h, w);
  }
  void relu_max_pool2_backward(const float* dy, const int* where, float* dx, int planes, int h, int w) override {
    cuda::relu_max_pool2_backward(stream_, dy, where, dx, planes, h, w);
  }
  void dropout_forward(const float* x, float* y, float* mask, int rows, int width, float p,
                       const DropoutKey& key) override {
    cuda::dropout_forward(stream_, x, y, mask, rows, width, p, key);
  }
  void multiply(float* y, const float* a, const float* b, std::size_t n) override { cuda::multiply(stream_, y, a, b, n); }

  // The GPT's: cuda/gpt_kernels.cu.
  void embed_forward(float* out, const int* tok, const float* wte, const float* wpe, int B, int T, int C) override {
    gpt::embed_forward(stream_, out, tok, wte, wpe, B, T, C);
  }
  void embed_backward(float* dwte, float* dwpe, const float* dout, const int* tok, int B, int T, int C) override {
    gpt::embed_backward(stream_, dwte, dwpe, dout, tok, B, T, C);
  }
  void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                         int C) override {
    gpt::layernorm_forward(stream_, out, mean, rstd, x, w, b, N, C);
  }
  void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                          const float* mean, const float* rstd, int N, int C) override {
    gpt::layernorm_backward(stream_, dx, dw, db, dout, x, w, mean, rstd, N, C);
  }
  std::size_t attention_saved(int B, int T, int NH) const override { return gpt::attention_saved(B, T, NH); }
  void attention_forward(float* out, float* saved, const float* qkv, int B, int T, int C, int NH) override {
    gpt::attention_forward(stream_, out, saved, qkv, B, T, C, NH);
  }
  void attention_backward(float* dqkv, const float* dout, const float* out, const float* qkv, float* saved, int B,
                          int T, int C, int NH) override {
    gpt::attention_backward(stream_, dqkv, dout, out, qkv, saved, B, T, C, NH);
  }
  void gelu_forward(float* out, const float* x, std::size_t n) override { gpt::gelu_forward(stream_, out, x, n); }
  void gelu_backward(float* dx, const float* x, const float* d, std::size_t n) override {
    gpt::gelu_backward(stream_, dx, x, d, n);
  }
  void cross_entropy_padded(const float* logits, const int* targets, float* dlogits, int N, int V, int Vp,
                            float* loss_acc) override {
    gpt::cross_entropy_padded(stream_, logits, targets, dlogits, N, V, Vp, loss_acc);
  }
  void sum_squares(const float* x, std::size_t n, float* acc) override { gpt::sum_squares(stream_, x, n, acc); }
  void adamw(float* w, float* m, float* v, const float* g, const float* decay, std::size_t n, float lr, float beta1,
             float beta2, float eps, float wd, float clip, int* step) override {
    cuda::adamw(stream_, w, m, v, g, decay, n, lr, beta1, beta2, eps, wd, clip, step, adam_bias());
  }

  void relu_forward(const float* x, float* y, std::size_t n) override {
    if (n == 0) return;
    relu_forward_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(x, y, n);
    CUDA_CHECK_LAUNCH();
  }
  void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) override {
    if (n == 0) return;
    relu_backward_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(y, dy, dx, n);
    CUDA_CHECK_LAUNCH();
  }

  void cross_entropy(const float* logits, const int* labels, float* dlogits, int batch, int classes, float scale,
                     float* loss_acc) override {
    if (batch <= 0 || classes <= 0) return;
    cross_entropy_kernel<<<reduce_blocks_for(batch), kThreads, 0, stream_>>>(logits, labels, dlogits, batch, classes,
                                                                             scale, loss_acc);
    CUDA_CHECK_LAUNCH();
  }
  void mse(const float* pred, const float* target, float* dpred, std::size_t n, float scale, float* loss_acc) override {
    if (n == 0) return;
    mse_kernel<<<reduce_blocks_for(n), kThreads, 0, stream_>>>(pred, target, dpred, n, scale, loss_acc);
    CUDA_CHECK_LAUNCH();
  }

  void count_correct(const float* logits, const int* labels, int batch, int classes, float* acc) override {
    if (batch <= 0 || classes <= 0) return;
    count_correct_kernel<<<reduce_blocks_for(batch), kThreads, 0, stream_>>>(logits, labels, batch, classes, acc);
    CUDA_CHECK_LAUNCH();
  }
  void sum_squared_error(const float* pred, const float* target, std::size_t n, float* acc) override {
    if (n == 0) return;
    sum_squared_error_kernel<<<reduce_blocks_for(n), kThreads, 0, stream_>>>(pred, target, n, acc);
    CUDA_CHECK_LAUNCH();
  }

  void sgd_momentum(float* w, float* velocity, const float* g, std::size_t n, float lr, float momentum) override {
    cuda::sgd_momentum(stream_, w, velocity, g, n, lr, momentum);
  }
  void adam(float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1, float beta2, float eps,
            int* step) override {
    cuda::adam(stream_, w, m, v, g, n, lr, beta1, beta2, eps, step, adam_bias());
  }
  void adadelta(float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho,
                float eps) override {
    cuda::adadelta(stream_, w, sq, acc, g, n, lr, rho, eps);
  }

 private:
  AdamBias* adam_bias() {  // allocated at the first Adam step
    return adam_bias_ ? adam_bias_ : (adam_bias_ = static_cast<AdamBias*>(zeroed(sizeof(AdamBias))));
  }
  void* zeroed(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
    return p;
  }

  void upload_bytes(void* dst, const void* host_src, std::size_t bytes) {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  cudaEvent_t fence_event(int slot) {
    if (slot < 0 || slot >= kFences) die("fence slot " + std::to_string(slot) + " out of range (a bug in ddp-train)");
    if (!fences_[slot]) CUDA_CHECK(cudaEventCreateWithFlags(&fences_[slot], cudaEventDisableTiming));
    return fences_[slot];
  }

  std::shared_ptr<CudaContext> ctx_;  // keeps the stream and the cuBLAS handle alive
  cudaStream_t stream_;
  Gemm gemm_;  // the linear layers' products, fp32 or bf16
  std::string name_;
  AdamBias* adam_bias_ = nullptr;  // device: this step's bias corrections (adam_tick_kernel)
  cudaEvent_t fences_[kFences] = {};
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace

std::unique_ptr<Ops> make_cuda_ops(std::shared_ptr<CudaContext> context, MatmulPrecision matmul) {
  return std::make_unique<CudaOps>(std::move(context), matmul);
}

}  // namespace ddp::train::cuda

namespace ddp::train {

Result<std::unique_ptr<Ops>> make_cuda_ops(int device, MatmulPrecision matmul) {
  auto context = cuda::make_cuda_context(device);
  if (!context) return fail(context.error());
  return cuda::make_cuda_ops(std::move(context).value(), matmul);
}

}  // namespace ddp::train
