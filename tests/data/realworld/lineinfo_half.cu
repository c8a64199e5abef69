// Ordinary f16 code compiled with -lineinfo: .file/.loc lines between the instructions, a
// __restrict__ kernel with a reqntid bound, and a weak (template) device function.
#include <cuda_fp16.h>

template <typename T> __device__ __noinline__ T axpy(T a, T x, T y) { return __hfma(a, x, y); }

__global__ void __launch_bounds__(256, 2) half_axpy(const __half *__restrict__ x,
                                                     __half *__restrict__ y, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = axpy(a, x[i], __hsub(y[i], __hmul(a, a)));
}
