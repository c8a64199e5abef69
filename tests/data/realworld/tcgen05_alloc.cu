// Blackwell tensor memory (sm_100a): tcgen05.alloc/dealloc/relinquish through cuda::ptx, a TMA
// bulk copy with mbarrier completion, packed f32x2 arithmetic and the sm_100 mixed-precision
// fma written as inline asm (the PTX CUTLASS' SM100 epilogues emit).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

__global__ void __launch_bounds__(128) tmem_roundtrip(const float *in, float *out,
                                                       const __nv_bfloat16 *h) {
  __shared__ __align__(16) uint32_t tmem_addr;
  __shared__ __align__(16) float buf[256];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x < 32) {
    ptx::tcgen05_alloc(ptx::cta_group_1, &tmem_addr, 32);
    ptx::tcgen05_relinquish_alloc_permit(ptx::cta_group_1);
  }
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, buf, in, sizeof(buf), &bar);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &bar, sizeof(buf));
  }
  __syncthreads();
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  ptx::tcgen05_fence_before_thread_sync();
  unsigned long long a, b, d;
  a = *reinterpret_cast<const unsigned long long *>(&buf[2 * (threadIdx.x & 63)]);
  b = *reinterpret_cast<const unsigned long long *>(&in[2 * threadIdx.x]);
  asm("mul.rn.f32x2 %0, %1, %2;" : "=l"(d) : "l"(a), "l"(b));
  asm("add.rz.f32x2 %0, %0, %1;" : "+l"(d) : "l"(a));
  float lo = __uint_as_float((unsigned)d), hi = __uint_as_float((unsigned)(d >> 32));
  unsigned short hb = __bfloat16_as_ushort(h[threadIdx.x]);
  float m;
  asm("fma.rn.f32.bf16 %0, %1, %1, %2;" : "=f"(m) : "h"(hb), "f"(lo));
  out[threadIdx.x] = m + hi;
  __syncthreads();
  if (threadIdx.x < 32)
    ptx::tcgen05_dealloc(ptx::cta_group_1, tmem_addr, 32);
}
