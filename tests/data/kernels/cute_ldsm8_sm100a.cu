// The 8-bit matrix moves of sm_100a through CUTLASS 4.2's CuTe copy atoms
// (cute/arch/copy_sm100.hpp), for ptxfp.run.  One warp:
//   1. copies a 32 x 16-byte tile from global `in` to shared memory, lane l's 16 bytes
//      going to shared row (5 l) % 32 (so the addresses are not the lane order);
//   2. loads it back with every 8-bit ldmatrix form, lane l addressing shared row
//      (5 l) % 32 again, i.e. input row l (matrix i of a .num is rows 16 i.. / 8 i..):
//        SM100_U8x8_LDSM_T   ldmatrix.m16n16.x1.trans.b8 (then CuTe's byte shuffle)
//        SM100_U8x16_LDSM_T  ldmatrix.m16n16.x2.trans.b8 (then CuTe's byte shuffle)
//        SM100_SU{4,6}_DU8x16_x{1,2,4}_LDSM_N  ldmatrix.m8n16.x{1,2,4}.b8x16.b{4x16_p64,6x16_p32}
//      and, with no CuTe atom for them, asm ldmatrix.m16n16.x{1,2}.trans.b8x16.b{6x16_p32,
//      4x16_p64};
//   3. stores lane l's four input words (words 4 l .. 4 l + 3 of `in`) with
//      SM100_U8x{4,8,16}_STSM_T (stmatrix.m16n8.x{1,2,4}.trans.b8) into a zeroed shared tile,
//      lane l addressing its row l, and copies that tile out;
//   4. round trip: stores the SM100_U8x16_LDSM_T registers with SM100_U8x8_STSM_T twice
//      (matrices 0 and 1) into a zeroed tile and copies it out.
// (__syncthreads, bar.sync 0, rather than __syncwarp: ptxfp.run does not model bar.warp.sync.)
// out is word-major per lane: out[s * 32 + l] is slot s of lane l (see the test for slots).
#include <cstdint>
#include <cute/arch/copy_sm100.hpp>

using namespace cute;

__device__ __forceinline__ uint128_t& row(uint8_t* base, int r) {
  return *reinterpret_cast<uint128_t*>(base + 16 * r);
}

template <class Atom, int N>
__device__ __forceinline__ void ldsm(uint128_t const& src, uint32_t (&d)[N]) {
  if constexpr (N == 1) Atom::copy(src, d[0]);
  else if constexpr (N == 2) Atom::copy(src, d[0], d[1]);
  else Atom::copy(src, d[0], d[1], d[2], d[3]);
}

template <int N>
__device__ __forceinline__ void put(uint32_t* out, int& slot, int lane, uint32_t const (&d)[N]) {
  #pragma unroll
  for (int i = 0; i < N; ++i) out[(slot + i) * 32 + lane] = d[i];
  slot += N;
}

__device__ __forceinline__ void tile_out(uint32_t* out, int& slot, int lane, uint8_t* t) {
  uint4 v = reinterpret_cast<uint4*>(t)[lane];
  uint32_t d[4] = {v.x, v.y, v.z, v.w};
  put(out, slot, lane, d);
}

__device__ __forceinline__ void clear(uint8_t* t, int lane) {
  reinterpret_cast<uint4*>(t)[lane] = make_uint4(0, 0, 0, 0);
  __syncthreads();
}

__global__ void __launch_bounds__(32) cute_ldsm8(uint4 const* __restrict__ in,
                                                  uint32_t* __restrict__ out) {
  __shared__ alignas(128) uint8_t tile[512];
  __shared__ alignas(128) uint8_t st[512];
  int const l = threadIdx.x;
  int const r = (5 * l) % 32;
  uint4 const mine = in[l];
  reinterpret_cast<uint4*>(tile)[r] = mine;
  __syncthreads();
  uint128_t const& src = row(tile, r);
  int slot = 0;

  { uint32_t d[2]; ldsm<SM100_U8x8_LDSM_T>(src, d); put(out, slot, l, d); }
  uint32_t x2[4];
  ldsm<SM100_U8x16_LDSM_T>(src, x2);
  put(out, slot, l, x2);
  uint32_t const a = cast_smem_ptr_to_uint(&src);
  { uint32_t d[2];
    asm volatile("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16.b6x16_p32 {%0, %1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(a));
    put(out, slot, l, d); }
  { uint32_t d[4];
    asm volatile("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b6x16_p32 "
                 "{%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a));
    put(out, slot, l, d); }
  { uint32_t d[2];
    asm volatile("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16.b4x16_p64 {%0, %1}, [%2];\n"
                 : "=r"(d[0]), "=r"(d[1]) : "r"(a));
    put(out, slot, l, d); }
  { uint32_t d[4];
    asm volatile("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b4x16_p64 "
                 "{%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a));
    put(out, slot, l, d); }
  { uint32_t d[1]; ldsm<SM100_SU4_DU8x16_x1_LDSM_N>(src, d); put(out, slot, l, d); }
  { uint32_t d[2]; ldsm<SM100_SU4_DU8x16_x2_LDSM_N>(src, d); put(out, slot, l, d); }
  { uint32_t d[4]; ldsm<SM100_SU4_DU8x16_x4_LDSM_N>(src, d); put(out, slot, l, d); }
  { uint32_t d[1]; ldsm<SM100_SU6_DU8x16_x1_LDSM_N>(src, d); put(out, slot, l, d); }
  { uint32_t d[2]; ldsm<SM100_SU6_DU8x16_x2_LDSM_N>(src, d); put(out, slot, l, d); }
  { uint32_t d[4]; ldsm<SM100_SU6_DU8x16_x4_LDSM_N>(src, d); put(out, slot, l, d); }

  uint128_t& dst = row(st, l);
  clear(st, l);
  SM100_U8x4_STSM_T::copy(mine.x, dst);
  __syncthreads();
  tile_out(out, slot, l, st);
  __syncthreads();
  clear(st, l);
  SM100_U8x8_STSM_T::copy(mine.x, mine.y, dst);
  __syncthreads();
  tile_out(out, slot, l, st);
  __syncthreads();
  clear(st, l);
  SM100_U8x16_STSM_T::copy(mine.x, mine.y, mine.z, mine.w, dst);
  __syncthreads();
  tile_out(out, slot, l, st);
  __syncthreads();
  clear(st, l);
  SM100_U8x8_STSM_T::copy(x2[0], x2[1], row(st, l));
  SM100_U8x8_STSM_T::copy(x2[2], x2[3], row(st, (l + 16) % 32));
  __syncthreads();
  tile_out(out, slot, l, st);
}
