__constant__ float ctab[4] = {1.0f, 2.0f, 3.0f, 4.5f};
__device__ int gcount = 7;
__device__ __noinline__ float addsq(float a, float b) { return a * a + b; }
extern "C" __global__ void k(float *out, const float *in, unsigned long long *o64) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  float *p = (t & 1) ? s : (float*)in;   // generic
  float v = p[t ^ 1] + ctab[t & 3];
  out[t] = addsq(v, (float)gcount);
  unsigned long long a = o64[t], b = 0xffffffffULL;
  o64[t] = a + b;
  unsigned m = __match_any_sync(0xffffffff, t & 3);
  out[64 + t] = (float)m;
}
