// The packing order of cvt into fp8/fp6/fp4/ue8m0 as nvcc emits it for NVIDIA's own intrinsics
// (tests/test_smallfloat.py::test_nvcc_puts_the_upper_lane_first compiles this with -ptx).
#include <cuda_fp8.h>
#include <cuda_fp6.h>
#include <cuda_fp4.h>
extern "C" __global__ void fp8(const float2 *in, __nv_fp8x2_storage_t *out) { out[0] = __nv_cvt_float2_to_fp8x2(in[0], __NV_SATFINITE, __NV_E4M3); }
extern "C" __global__ void fp6(const float2 *in, __nv_fp6x2_storage_t *out) { out[0] = __nv_cvt_float2_to_fp6x2(in[0], __NV_E2M3, cudaRoundNearest); }
extern "C" __global__ void fp4(const float2 *in, __nv_fp4x2_storage_t *out) { out[0] = __nv_cvt_float2_to_fp4x2(in[0], __NV_E2M1, cudaRoundNearest); }
extern "C" __global__ void e8m0(const float2 *in, __nv_fp8x2_storage_t *out) { out[0] = __nv_cvt_float2_to_e8m0x2(in[0], __NV_SATFINITE, cudaRoundPosInf); }
extern "C" __global__ void w8(const __nv_fp8x2_storage_t *in, __half2_raw *out) { out[0] = __nv_cvt_fp8x2_to_halfraw2(in[0], __NV_E5M2); }
