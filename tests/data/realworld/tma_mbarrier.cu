// Hopper TMA + mbarrier pipeline (sm_90a), in the style of CUTLASS' SM90 collectives:
// cuda::ptx (libcu++) wrappers for mbarrier/TMA plus f16 arithmetic on the loaded tile.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda/ptx>
#include <cooperative_groups.h>
namespace ptx = cuda::ptx;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
tma_tile(const __grid_constant__ CUtensorMap map, __half *out, int x0, int y0) {
  extern __shared__ __align__(128) __half smem[];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t coords[2] = {x0, y0};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, smem, &map, coords, &bar);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                   64 * 64 * sizeof(__half));
  } else {
    (void)ptx::mbarrier_arrive(&bar);
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  __half acc = __float2half(0.0f);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
    acc = __hfma(smem[i], __float2half(0.5f), acc);
  out[blockIdx.x * blockDim.x + threadIdx.x] = __hadd(acc, __hmul(acc, acc));
  namespace cg = cooperative_groups;
  cg::this_cluster().sync();
}
