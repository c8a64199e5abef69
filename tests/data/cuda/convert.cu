// Conversions between f32 and f16/bf16 (scalar and packed) in cuda_fp16.h / cuda_bf16.h.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void conversions(const float *f, __half *h, __half2 *h2,
                                       __nv_bfloat16 *b, __nv_bfloat162 *b2, float *back, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[2 * i], y = f[2 * i + 1];
    h[4 * i + 0] = __float2half(x);
    h[4 * i + 1] = __float2half_rz(x);
    h[4 * i + 2] = __float2half_rd(x);
    h[4 * i + 3] = __float2half_ru(x);
    h2[i] = __floats2half2_rn(x, y);
    b[4 * i + 0] = __float2bfloat16(x);
    b[4 * i + 1] = __float2bfloat16_rz(x);
    b[4 * i + 2] = __float2bfloat16_rd(x);
    b[4 * i + 3] = __float2bfloat16_ru(x);
    b2[i] = __floats2bfloat162_rn(x, y);
    back[2 * i] = __half2float(h[4 * i]) + __bfloat162float(b[4 * i]);
    back[2 * i + 1] = __low2float(h2[i]) * __high2float(b2[i]);
}
