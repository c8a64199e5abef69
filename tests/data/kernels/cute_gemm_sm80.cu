// An sm_80 GEMM written with CuTe (the nvidia-cutlass wheel's headers), after the pattern of
// CUTLASS's CuTe sm80 tutorial: cp.async global -> shared (SM80_CP_ASYNC_CACHEGLOBAL copy
// atoms, 16 bytes a thread) into a two-stage swizzled K-major shared tile, ldmatrix shared ->
// registers (SM75_U32x4_LDSM_N, retiled to the MMA's fragments), mma.sync m16n8k16 on a 2x2
// warp TiledMMA, accumulator written straight to global memory.
//
//   C = A * B^T   A: M x K, B: N x K (both K-major), C: M x N row-major
//   CTA tile 64 x 64 x 32, 128 threads; M, N multiples of 64, K a multiple of 32
//
// Two entries: cute_gemm_bf16 (bf16 in, f32 accumulate: SM80_16x8x16_F32BF16BF16F32_TN)
// and cute_gemm_f16 (f16 in, f16 accumulate: SM80_16x8x16_F16F16F16F16_TN).
// Compiled by tools/cute_gemm_sm80.py.
#include <cute/tensor.hpp>

using namespace cute;

template <class TA, class TC, class MmaOp>
__device__ void gemm_tn(TA const* A, TA const* B, TC* C, int M, int N, int K)
{
  using BM = Int<64>;
  using BN = Int<64>;
  using BK = Int<32>;
  using STAGES = Int<2>;

  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
  Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, Int<1>{}));
  Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));

  auto cta_tiler = make_shape(BM{}, BN{}, BK{});
  auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1,  X, _1>{});   // (BM, BK, k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step< X, _1, _1>{});   // (BN, BK, k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1,  X>{});   // (BM, BN)

  // K-major shared tiles, 16-byte chunks swizzled across rows (ldmatrix reads 16-byte rows)
  auto atom = composition(Swizzle<2, 3, 3>{},
                          Layout<Shape<_8, BK>, Stride<BK, _1>>{});
  auto sA_layout = tile_to_shape(atom, make_shape(BM{}, BK{}, STAGES{}));
  auto sB_layout = tile_to_shape(atom, make_shape(BN{}, BK{}, STAGES{}));
  __shared__ alignas(128) TA smemA[cosize_v<decltype(sA_layout)>];
  __shared__ alignas(128) TA smemB[cosize_v<decltype(sB_layout)>];
  Tensor sA = make_tensor(make_smem_ptr(smemA), sA_layout);               // (BM, BK, PIPE)
  Tensor sB = make_tensor(make_smem_ptr(smemB), sB_layout);

  // global -> shared: 32 x 4 threads, 8 elements (16 bytes) each, cp.async.cg
  auto g2s = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, TA>{},
                             Layout<Shape<_32, _4>, Stride<_4, _1>>{},
                             Layout<Shape<_1, _8>>{});
  auto g2s_thr = g2s.get_slice(threadIdx.x);
  Tensor tAgA = g2s_thr.partition_S(gA);                                  // (CPY, CM, CK, k)
  Tensor tAsA = g2s_thr.partition_D(sA);                                  // (CPY, CM, CK, PIPE)
  Tensor tBgB = g2s_thr.partition_S(gB);
  Tensor tBsB = g2s_thr.partition_D(sB);

  // 2 x 2 warps of m16n8k16, each warp 16 x 16 of a 32 x 32 x 16 tile
  TiledMMA mma = make_tiled_mma(MmaOp{}, Layout<Shape<_2, _2, _1>>{}, Tile<_32, _32, _16>{});
  auto thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCgC = thr_mma.partition_C(gC);                                  // (MMA, MMA_M, MMA_N)
  Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));                // (MMA, MMA_M, MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));
  Tensor tCrC = thr_mma.make_fragment_C(tCgC);
  clear(tCrC);

  // shared -> registers: ldmatrix.x4 retiled to the MMA's A and B fragments
  auto s2r_a = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, TA>{}, mma);
  auto s2r_a_thr = s2r_a.get_slice(threadIdx.x);
  Tensor tXsA = s2r_a_thr.partition_S(sA);                                // (CPY, M, K, PIPE)
  Tensor tXrA = s2r_a_thr.retile_D(tCrA);
  auto s2r_b = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, TA>{}, mma);
  auto s2r_b_thr = s2r_b.get_slice(threadIdx.x);
  Tensor tXsB = s2r_b_thr.partition_S(sB);
  Tensor tXrB = s2r_b_thr.retile_D(tCrB);

  int k_tiles = size<3>(tAgA);
  copy(g2s, tAgA(_, _, _, 0), tAsA(_, _, _, 0));
  copy(g2s, tBgB(_, _, _, 0), tBsB(_, _, _, 0));
  cp_async_fence();
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    int s = k_tile % 2;
    if (k_tile + 1 < k_tiles) {            // the next tile into the other stage
      copy(g2s, tAgA(_, _, _, k_tile + 1), tAsA(_, _, _, 1 - s));
      copy(g2s, tBgB(_, _, _, k_tile + 1), tBsB(_, _, _, 1 - s));
    }
    cp_async_fence();
    cp_async_wait<1>();                    // this tile's group has landed
    __syncthreads();
    CUTE_UNROLL
    for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {   // k16 steps, increasing k
      copy(s2r_a, tXsA(_, _, k_block, s), tXrA(_, _, k_block));
      copy(s2r_b, tXsB(_, _, k_block, s), tXrB(_, _, k_block));
      gemm(mma, tCrA(_, _, k_block), tCrB(_, _, k_block), tCrC);
    }
    __syncthreads();                       // the stage is free for the copy after next
  }
  copy(tCrC, tCgC);
}

extern "C" __global__ void __launch_bounds__(128)
cute_gemm_bf16(bfloat16_t const* A, bfloat16_t const* B, float* C, int M, int N, int K)
{
  gemm_tn<bfloat16_t, float, SM80_16x8x16_F32BF16BF16F32_TN>(A, B, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(128)
cute_gemm_f16(half_t const* A, half_t const* B, half_t* C, int M, int N, int K)
{
  gemm_tn<half_t, half_t, SM80_16x8x16_F16F16F16F16_TN>(A, B, C, M, N, K);
}
