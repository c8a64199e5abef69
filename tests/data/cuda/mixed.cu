// f16/bf16 operands combined with f32 accumulators (candidates for the sm_100 mixed forms).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void mixed(const __half *a, const __nv_bfloat16 *b, const float *c,
                                 float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float fa = __half2float(a[i]);
    float fb = __bfloat162float(b[i]);
    out[3 * i + 0] = __fadd_rz(fa, c[i]);
    out[3 * i + 1] = __fmaf_rn(fa, fb, c[i]);
    out[3 * i + 2] = __fsub_rd(fb, c[i]);
}

// Half arithmetic with a loop, a branch and shared memory.
extern "C" __global__ void dot_f16(const __half2 *a, const __half2 *b, float *out, int n)
{
    __shared__ float partial[128];
    __half2 acc = __float2half2_rn(0.0f);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc = __hfma2(a[i], b[i], acc);
    partial[threadIdx.x] = __low2float(acc) + __high2float(acc);
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int k = 0; k < blockDim.x && k < 128; ++k) s += partial[k];
        out[blockIdx.x] = s;
    }
}
