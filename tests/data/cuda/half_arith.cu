// f16 scalar and f16x2 arithmetic through cuda_fp16.h intrinsics.
#include <cuda_fp16.h>

extern "C" __global__ void f16_scalar(const __half *a, const __half *b, const __half *c,
                                      __half *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i], y = b[i], z = c[i];
    out[8 * i + 0] = __hadd(x, y);
    out[8 * i + 1] = __hsub(x, y);
    out[8 * i + 2] = __hmul(x, y);
    out[8 * i + 3] = __hmul_rn(x, y);
    out[8 * i + 4] = __hfma(x, y, z);
    out[8 * i + 5] = __hadd_sat(x, y);
    out[8 * i + 6] = __hfma_sat(x, y, z);
    out[8 * i + 7] = __hadd_rn(x, y);
}

extern "C" __global__ void f16_relu(const __half *a, const __half *b, const __half *c,
                                    __half *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __hfma_relu(a[i], b[i], c[i]);
}

extern "C" __global__ void f16x2_ops(const __half2 *a, const __half2 *b, const __half2 *c,
                                     __half2 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], y = b[i], z = c[i];
    out[6 * i + 0] = __hadd2(x, y);
    out[6 * i + 1] = __hsub2(x, y);
    out[6 * i + 2] = __hmul2(x, y);
    out[6 * i + 3] = __hfma2(x, y, z);
    out[6 * i + 4] = __hfma2_relu(x, y, z);
    out[6 * i + 5] = __hmul2_sat(x, y);
}
