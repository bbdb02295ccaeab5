// DDP_CPU_CLONES: the CPU backend's own loops (im2col, pooling, dropout's
// coins, ReLU, the optimizer steps; OpenBLAS runs the products) compiled
// three times, for x86-64-v4 (AVX-512), v3 (AVX2) and the x86-64 baseline;
// the loader picks the best the node runs (GCC's and clang's target_clones,
// an IFUNC). One binary serves every node of a mixed cluster, each node with
// the widest vectors it has: dropout's 64-bit hash and the pooling's
// selects gain most from them.
//
// Every copy computes the same bits: these files are built with
// -ffp-contract=off (no fused multiply-add the baseline would not do) and
// without reassociation, so ranks on different CPUs keep equal weights.
#pragma once

#if defined(__x86_64__) && !defined(__CUDACC__)
#define DDP_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DDP_CPU_CLONES
#endif
