// bf16 scalar and bf16x2 arithmetic through cuda_bf16.h intrinsics.
#include <cuda_bf16.h>

extern "C" __global__ void bf16_scalar(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
                                       const __nv_bfloat16 *c, __nv_bfloat16 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 x = a[i], y = b[i], z = c[i];
    out[6 * i + 0] = __hadd(x, y);
    out[6 * i + 1] = __hsub(x, y);
    out[6 * i + 2] = __hmul(x, y);
    out[6 * i + 3] = __hfma(x, y, z);
    out[6 * i + 4] = __hfma_relu(x, y, z);
    out[6 * i + 5] = __hmul_rn(x, y);
}

extern "C" __global__ void bf16x2_ops(const __nv_bfloat162 *a, const __nv_bfloat162 *b,
                                      const __nv_bfloat162 *c, __nv_bfloat162 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat162 x = a[i], y = b[i], z = c[i];
    out[4 * i + 0] = __hadd2(x, y);
    out[4 * i + 1] = __hmul2(x, y);
    out[4 * i + 2] = __hfma2(x, y, z);
    out[4 * i + 3] = __hfma2_relu(x, y, z);
}
