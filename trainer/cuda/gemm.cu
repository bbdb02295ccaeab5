#include "cuda/cuda_context.cuh"
#include "cuda/gemm.cuh"
#include "cuda/grid.cuh"

namespace ddp::train::cuda {
namespace {

__global__ void round_to_bf16_kernel(const float* x, __nv_bfloat16* y, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) y[i] = __float2bfloat16_rn(x[i]);
}

// The floats a column-major operand spans: `cols` columns of `rows` at
// leading dimension `ld` (the last column need not run to ld).
std::size_t span(int rows, int cols, int ld) { return std::size_t(ld) * (cols - 1) + rows; }

}  // namespace

Gemm::~Gemm() {
  for (auto* b : buffer_) cudaFree(b);  // errors at exit: nothing left to do about them
}

const __nv_bfloat16* Gemm::rounded(int slot, const float* x, std::size_t count) {
  if (count > capacity_[slot]) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // the old buffer may still be read
    CUDA_CHECK(cudaFree(buffer_[slot]));
    buffer_[slot] = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer_[slot], count * sizeof(__nv_bfloat16)));
    capacity_[slot] = count;
  }
  round_to_bf16_kernel<<<blocks_for(count), kThreads, 0, stream_>>>(x, buffer_[slot], count);
  CUDA_CHECK_LAUNCH();
  return buffer_[slot];
}

void Gemm::run(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* a, int lda, const float* b,
               int ldb, float beta, float* c, int ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  const float one = 1.0f;
  if (precision_ == MatmulPrecision::fp32) {
    CUBLAS_CHECK(cublasSgemm(cublas_, ta, tb, m, n, k, &one, a, lda, b, ldb, &beta, c, ldc));
    return;
  }
  // op(A) is m x k: stored as m x k (N) or k x m (T); op(B) is k x n likewise.
  const auto* a16 = rounded(0, a, ta == CUBLAS_OP_N ? span(m, k, lda) : span(k, m, lda));
  const auto* b16 = rounded(1, b, tb == CUBLAS_OP_N ? span(k, n, ldb) : span(n, k, ldb));
  CUBLAS_CHECK(cublasGemmEx(cublas_, ta, tb, m, n, k, &one, a16, CUDA_R_16BF, lda, b16, CUDA_R_16BF, ldb, &beta, c,
                            CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace ddp::train::cuda
