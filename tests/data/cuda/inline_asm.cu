// Forms that cuda_fp16.h / cuda_bf16.h do not emit, written as inline PTX: the .oob fma
// (sm_90) and the mixed-precision add/sub/fma with an .f32 result (sm_100).  Guarded by
// __CUDA_ARCH__ so that every -arch of the Makefile compiles; lower archs simply lack them.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void oob_fma(const unsigned short *a, const unsigned short *b,
                                   const unsigned short *c, unsigned short *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if __CUDA_ARCH__ >= 900
    unsigned short r0, r1;
    asm("fma.rn.oob.f16 %0, %1, %2, %3;" : "=h"(r0) : "h"(a[i]), "h"(b[i]), "h"(c[i]));
    asm("fma.rn.oob.relu.bf16 %0, %1, %2, %3;" : "=h"(r1) : "h"(a[i]), "h"(b[i]), "h"(c[i]));
    out[2 * i] = r0;
    out[2 * i + 1] = r1;
#else
    out[2 * i] = out[2 * i + 1] = 0;
#endif
}

extern "C" __global__ void mixed_asm(const unsigned short *a, const unsigned short *b,
                                     const float *c, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if __CUDA_ARCH__ >= 1000
    float r0, r1, r2, r3;
    asm("add.rz.f32.f16 %0, %1, %2;" : "=f"(r0) : "h"(a[i]), "f"(c[i]));
    asm("sub.rm.sat.f32.bf16 %0, %1, %2;" : "=f"(r1) : "h"(b[i]), "f"(c[i]));
    asm("fma.rn.f32.f16 %0, %1, %2, %3;" : "=f"(r2) : "h"(a[i]), "h"(b[i]), "f"(c[i]));
    asm("fma.rp.sat.f32.bf16 %0, %1, %2, %3;" : "=f"(r3) : "h"(a[i]), "h"(b[i]), "f"(c[i]));
    out[4 * i] = r0; out[4 * i + 1] = r1; out[4 * i + 2] = r2; out[4 * i + 3] = r3;
#else
    out[4 * i] = c[i];
#endif
}
