// A CuTe-style sm_80 GEMM written with inline PTX (the pattern of CUTLASS's CuTe sm80 tutorial:
// cp.async global -> shared in two stages, ldmatrix shared -> registers, mma.sync m16n8k16),
// for ptxfp's interpreter tests.  Generated PTX: tools/mma_sm80_ptx.py.
//
// D (M x N, row-major) = A (M x K, row-major, f16) * B (K x N, row-major, f16), C = 0; one
// block of 128 threads (4 warps, 2 x 2, each 16 x 16 of D) per 32 x 32 tile of D; K in tiles of
// 32, each two k16 steps, in increasing k.  M, N multiples of 32, K of 32.
#include <cuda_fp16.h>
#include <stdint.h>

#define BK 32
#define PAD 8                                    // rows of 80 bytes: 16-byte aligned, no conflicts

struct Smem {
  half a[2][32][BK + PAD];                       // [stage][m][k]
  half b[2][BK][32 + PAD];                       // [stage][k][n]
};

__device__ __forceinline__ void load_tile(Smem &s, int stage, const half *A, const half *B,
                                          int K, int N, int m0, int n0, int k0) {
  int t = threadIdx.x;                           // 128 threads, one 16-byte chunk of each tile
  int row = t / 4, col = (t % 4) * 8;
  uint32_t sa = (uint32_t)__cvta_generic_to_shared(&s.a[stage][row][col]);
  uint32_t sb = (uint32_t)__cvta_generic_to_shared(&s.b[stage][row][col]);
  const half *ga = A + (size_t)(m0 + row) * K + k0 + col;
  const half *gb = B + (size_t)(k0 + row) * N + n0 + col;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(ga));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sb), "l"(gb));
}

template <bool F16ACC, typename TD>
__device__ __forceinline__ void gemm(const half *A, const half *B, TD *D, int M, int N, int K) {
  __shared__ __align__(128) Smem s;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int m0 = blockIdx.y * 32, n0 = blockIdx.x * 32;
  int wm = (warp / 2) * 16, wn = (warp % 2) * 16;
  float acc[2][4] = {};                          // f32 accumulators: two n8 tiles
  uint32_t hacc[2][2] = {};                      // f16x2 accumulators
  int KT = K / BK;
  load_tile(s, 0, A, B, K, N, m0, n0, 0);
  asm volatile("cp.async.commit_group;\n" ::);
  for (int kt = 0; kt < KT; ++kt) {
    if (kt + 1 < KT) load_tile(s, (kt + 1) & 1, A, B, K, N, m0, n0, (kt + 1) * BK);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    __syncthreads();
    int st = kt & 1;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[4], b[4];
      // A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
      uint32_t pa = (uint32_t)__cvta_generic_to_shared(
          &s.a[st][wm + lane % 16][kk + (lane / 16) * 8]);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
      // B (row-major k x n), transposed: (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), ...
      int i = lane / 8;
      uint32_t pb = (uint32_t)__cvta_generic_to_shared(
          &s.b[st][kk + (i % 2) * 8 + lane % 8][wn + (i / 2) * 8]);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3]) : "r"(pb));
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        if (F16ACC) {
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, "
              "{%6, %7}, {%0, %1};\n"
              : "+r"(hacc[j][0]), "+r"(hacc[j][1])
              : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * j]), "r"(b[2 * j + 1]));
        } else {
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
              "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
              : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
              : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * j]), "r"(b[2 * j + 1]));
        }
      }
    }
    __syncthreads();
  }
  asm volatile("cp.async.wait_all;\n" ::);
  // the accumulator fragment: rows lane/4 and lane/4 + 8, columns 2 (lane % 4) and + 1
  int g = lane / 4, c = 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    int col = n0 + wn + 8 * j + c;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int row = m0 + wm + g + 8 * h;
      if (F16ACC) {
        *(uint32_t *)&D[(size_t)row * N + col] = hacc[j][h];
      } else {
        D[(size_t)row * N + col] = acc[j][2 * h];
        D[(size_t)row * N + col + 1] = acc[j][2 * h + 1];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(128)
mma_f32acc(const half *A, const half *B, float *D, int M, int N, int K) {
  gemm<false>(A, B, D, M, N, K);
}

extern "C" __global__ void __launch_bounds__(128)
mma_f16acc(const half *A, const half *B, half *D, int M, int N, int K) {
  gemm<true>(A, B, D, M, N, K);
}
