// NVIDIA's own host-side small-float conversions (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h), exported
// over arrays for tests/test_smallfloat.py, which compiles this file with nvcc at test time.
// Each pair conversion takes the PTX operand order: a (the upper lane) and b (the lower lane);
// NVIDIA's float2 puts .y in the upper lane.  Nothing here computes: it only calls the headers.
#include <cuda_fp8.h>
#include <cuda_fp6.h>
#include <cuda_fp4.h>
#include <string.h>

static float f32(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static float2 pair(unsigned a, unsigned b) { float2 v; v.x = f32(b); v.y = f32(a); return v; }

extern "C" {
// kind: 0 e4m3, 1 e5m2
void f32_to_fp8x2(const unsigned *a, const unsigned *b, unsigned short *d, long n, int kind) {
    for (long i = 0; i < n; i++)
        d[i] = __nv_cvt_float2_to_fp8x2(pair(a[i], b[i]), __NV_SATFINITE,
                                        kind ? __NV_E5M2 : __NV_E4M3);
}
void f16x2_to_fp8x2(const unsigned *a, unsigned short *d, long n, int kind) {
    for (long i = 0; i < n; i++) {
        __half2_raw h; h.x = (unsigned short)(a[i] & 0xFFFF); h.y = (unsigned short)(a[i] >> 16);
        d[i] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, kind ? __NV_E5M2 : __NV_E4M3);
    }
}
void fp8x2_to_f16x2(const unsigned short *a, unsigned *d, long n, int kind) {
    for (long i = 0; i < n; i++) {
        __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(a[i], kind ? __NV_E5M2 : __NV_E4M3);
        d[i] = (unsigned)h.x | ((unsigned)h.y << 16);
    }
}
// kind: 0 e2m3, 1 e3m2
void f32_to_fp6x2(const unsigned *a, const unsigned *b, unsigned short *d, long n, int kind) {
    for (long i = 0; i < n; i++)
        d[i] = __nv_cvt_float2_to_fp6x2(pair(a[i], b[i]), kind ? __NV_E3M2 : __NV_E2M3,
                                        cudaRoundNearest);
}
void fp6x2_to_f16x2(const unsigned short *a, unsigned *d, long n, int kind) {
    for (long i = 0; i < n; i++) {
        __half2_raw h = __nv_cvt_fp6x2_to_halfraw2(a[i], kind ? __NV_E3M2 : __NV_E2M3);
        d[i] = (unsigned)h.x | ((unsigned)h.y << 16);
    }
}
void f32_to_fp4x2(const unsigned *a, const unsigned *b, unsigned char *d, long n) {
    for (long i = 0; i < n; i++)
        d[i] = __nv_cvt_float2_to_fp4x2(pair(a[i], b[i]), __NV_E2M1, cudaRoundNearest);
}
void fp4x2_to_f16x2(const unsigned char *a, unsigned *d, long n) {
    for (long i = 0; i < n; i++) {
        __half2_raw h = __nv_cvt_fp4x2_to_halfraw2(a[i], __NV_E2M1);
        d[i] = (unsigned)h.x | ((unsigned)h.y << 16);
    }
}
// rp: 0 rz, 1 rp
void f32_to_e8m0x2(const unsigned *a, const unsigned *b, unsigned short *d, long n, int sat, int rp) {
    for (long i = 0; i < n; i++)
        d[i] = __nv_cvt_float2_to_e8m0x2(pair(a[i], b[i]), sat ? __NV_SATFINITE : __NV_NOSAT,
                                         rp ? cudaRoundPosInf : cudaRoundZero);
}
void bf16x2_to_e8m0x2(const unsigned *a, unsigned short *d, long n, int sat, int rp) {
    for (long i = 0; i < n; i++) {
        __nv_bfloat162_raw h; h.x = (unsigned short)(a[i] & 0xFFFF); h.y = (unsigned short)(a[i] >> 16);
        d[i] = __nv_cvt_bfloat162raw_to_e8m0x2(h, sat ? __NV_SATFINITE : __NV_NOSAT,
                                               rp ? cudaRoundPosInf : cudaRoundZero);
    }
}
void e8m0x2_to_bf16x2(const unsigned short *a, unsigned *d, long n) {
    for (long i = 0; i < n; i++) {
        __nv_bfloat162_raw h = __nv_cvt_e8m0x2_to_bf162raw(a[i]);
        d[i] = (unsigned)h.x | ((unsigned)h.y << 16);
    }
}
}
