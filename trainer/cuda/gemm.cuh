// The linear layers' matrix products, in the precision the run asks for
// (gpu_backend.hpp, MatmulPrecision):
//  - fp32: cublasSgemm, the CPU's arithmetic (the parity rows);
//  - bf16: the operands rounded to bf16 just before the product, the product
//    on the tensor cores with fp32 sums (cublasGemmEx, CUBLAS_COMPUTE_32F),
//    the result written in fp32. The master weights, the activations, the
//    gradients and everything outside the products stay fp32 (PyTorch's
//    bf16 autocast rounds each product's result to bf16 as well; we keep
//    it fp32, which costs memory traffic, not accuracy).
// Internal to trainer/cuda/.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gpu_backend.hpp"

namespace ddp::train::cuda {

class Gemm {
 public:
  Gemm(cublasHandle_t cublas, cudaStream_t stream, MatmulPrecision precision)
      : cublas_(cublas), stream_(stream), precision_(precision) {}
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // C[m x n] = op(A) op(B) + beta C, column-major, as cublasSgemm with alpha 1.
  void run(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);

 private:
  // A bf16 copy of `count` floats at `x`, in `slot`'s buffer. The buffers
  // only grow, and reach their size in the first step (a CUDA graph captured
  // later allocates nothing).
  const __nv_bfloat16* rounded(int slot, const float* x, std::size_t count);

  cublasHandle_t cublas_;
  cudaStream_t stream_;
  MatmulPrecision precision_;
  __nv_bfloat16* buffer_[2] = {};
  std::size_t capacity_[2] = {};
};

}  // namespace ddp::train::cuda
