// Ampere (sm_80) multistage pipeline in the style of CUTLASS' SM80 mainloop: cp.async with an
// L2 prefetch hint, ldmatrix, mma.sync on f16, packed integer adds, a device function call
// through a pointer (callprototype) and a dynamic shared array.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

__device__ __noinline__ __half2 scale2(__half2 x, __half2 s) { return __hfma2(x, s, x); }
__device__ __half2 (*volatile scale_fn)(__half2, __half2) = scale2;

__global__ void mma_tile(const __half *A, const __half *B, float *C, unsigned *P) {
  extern __shared__ __align__(16) __half sm[];
  const int t = threadIdx.x;
  __pipeline_memcpy_async(&sm[8 * t], &A[8 * t], 16);
  __pipeline_memcpy_async(&sm[512 + 8 * t], &B[8 * t], 16);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  unsigned a[4], b[2];
  unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(&sm[(t % 16) * 16]));
  unsigned sb = static_cast<unsigned>(__cvta_generic_to_shared(&sm[512 + (t % 16) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(sa));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(b[0]), "=r"(b[1]) : "r"(sb));
  float c[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7},"
               " {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  unsigned p = P[t], q;
#if __CUDA_ARCH__ >= 900
  asm("add.s16x2 %0, %1, %1;" : "=r"(q) : "r"(p));   // packed integer add: sm_90 and later
  asm("add.u16x2 %0, %0, %1;" : "+r"(q) : "r"(p));
#else
  q = __vadd2(p, p) + p;
#endif
  __half2 h = scale_fn(__floats2half2_rn(c[0], c[1]), __float2half2_rn(0.25f));
  C[4 * t + 0] = __low2float(h) + c[2];
  C[4 * t + 1] = __high2float(h) + c[3];
  P[t] = q;
}
