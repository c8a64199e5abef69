// A CUTLASS 3 warp-specialized GEMM for sm_90a (384 threads: a producer warpgroup issuing TMA
// loads through an mbarrier pipeline, two consumer warpgroups issuing wgmma, a TMA-store
// epilogue), D = A * B^T in bf16 with f32 accumulation and an f32 D (alpha 1, beta 0).
// Built from CUTLASS's collective builders for ptxfp's tests (tools/cutlass_ws_gemm_sm90a.py):
// the device code is the PTX under test; the host main records the kernel's Params bytes, the
// parameters CUTLASS gives cuTensorMapEncodeTiled, and the launch shape.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cute/tensor.hpp"

using namespace cute;
using ElementA = cutlass::bfloat16_t;
using ElementB = cutlass::bfloat16_t;
using ElementC = float;
using ElementD = float;
using LayoutA = cutlass::layout::RowMajor;      // M x K, K contiguous
using LayoutB = cutlass::layout::ColumnMajor;   // K x N, K contiguous
using LayoutC = cutlass::layout::RowMajor;
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    ElementC, LayoutC, 4, ElementD, LayoutC, 4,
    cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, 8, ElementB,
    LayoutB, 8, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
    CollectiveMainloop, CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

static int n_maps = 0;
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dt,
    cuuint32_t rank, void* addr, const cuuint64_t* dim, const cuuint64_t* strides,
    const cuuint32_t* box, const cuuint32_t* es, CUtensorMapInterleave il,
    CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  printf("{\"map\": %d, \"data_type\": %d, \"rank\": %u, \"global_address\": %llu, "
         "\"global_dim\": [", n_maps, int(dt), rank, (unsigned long long)addr);
  for (unsigned i = 0; i < rank; ++i) printf("%s%llu", i ? ", " : "", (unsigned long long)dim[i]);
  printf("], \"global_strides\": [");
  for (unsigned i = 0; i + 1 < rank; ++i) printf("%s%llu", i ? ", " : "", (unsigned long long)strides[i]);
  printf("], \"box_dim\": [");
  for (unsigned i = 0; i < rank; ++i) printf("%s%u", i ? ", " : "", box[i]);
  printf("], \"element_strides\": [");
  for (unsigned i = 0; i < rank; ++i) printf("%s%u", i ? ", " : "", es[i]);
  printf("], \"interleave\": %d, \"swizzle\": %d, \"l2_promotion\": %d, \"oob_fill\": %d}\n",
         int(il), int(sw), int(l2), int(oob));
  std::memset(map, 0, sizeof(CUtensorMap));
  std::memcpy(map, "MAP#", 4);
  reinterpret_cast<unsigned char*>(map)[4] = (unsigned char)n_maps++;
  return CUDA_SUCCESS;
}

int main() {
  int M = 256, N = 256, K = 128;
  auto A = reinterpret_cast<ElementA*>(0x100000);
  auto B = reinterpret_cast<ElementB*>(0x200000);
  auto C = reinterpret_cast<ElementC*>(0x300000);
  auto D = reinterpret_cast<ElementD*>(0x400000);
  using SA = typename Gemm::GemmKernel::StrideA;
  using SB = typename Gemm::GemmKernel::StrideB;
  using SC = typename Gemm::GemmKernel::StrideC;
  using SD = typename Gemm::GemmKernel::StrideD;
  SA sa{};                       // packed: (row stride, 1, batch stride)
  get<0>(sa) = K; get<2>(sa) = int64_t(M) * K;
  SB sb{};
  get<0>(sb) = K; get<2>(sb) = int64_t(N) * K;
  SC sc{};
  get<0>(sc) = N; get<2>(sc) = int64_t(M) * N;
  SD sd{};
  get<0>(sd) = N; get<2>(sd) = int64_t(M) * N;
  cutlass::KernelHardwareInfo hw;
  hw.device_id = 0;
  hw.sm_count = 2;
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1},
                                {A, sa, B, sb}, {{1.0f, 0.0f}, C, sc, D, sd}, hw};
  auto params = GemmKernel::to_underlying_arguments(args, nullptr);
  printf("{\"arg\": \"params\", \"bytes\": \"");
  for (size_t i = 0; i < sizeof(params); ++i)
    printf("%02x", reinterpret_cast<unsigned char const*>(&params)[i]);
  printf("\"}\n");
  dim3 grid = GemmKernel::get_grid_shape(params);
  printf("{\"shared_bytes\": %d, \"threads\": %d, \"grid\": [%u, %u, %u], \"M\": %d, \"N\": %d, "
         "\"K\": %d, \"A\": %llu, \"B\": %llu, \"C\": %llu, \"D\": %llu}\n",
         int(GemmKernel::SharedStorageSize), int(GemmKernel::MaxThreadsPerBlock), grid.x, grid.y,
         grid.z, M, N, K, (unsigned long long)A, (unsigned long long)B,
         (unsigned long long)C, (unsigned long long)D);
  void const* k = reinterpret_cast<void const*>(&cutlass::device_kernel<GemmKernel>);
  return k == nullptr;
}
