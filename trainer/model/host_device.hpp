// DDP_HD marks a function the CPU backend and the CUDA kernels both call:
// __host__ __device__ under nvcc, nothing for the host compiler.
#pragma once

#ifdef __CUDACC__
#define DDP_HD __host__ __device__
#else
#define DDP_HD
#endif
