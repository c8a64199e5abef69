// softmax over rows: one block of 32 threads per row of n floats: max (fmaxf), then
// sum of exp(x - max) (exp2f of (x - max) * log2(e), i.e. ex2.approx), then the quotient.
extern "C" __global__ void softmax(const float *x, float *y, int n) {
    const float *r = x + blockIdx.x * n;
    float *o = y + blockIdx.x * n;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < n; j += 32) m = fmaxf(m, r[j]);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += 32) s += exp2f((r[j] - m) * 1.4426950408889634f);
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    for (int j = threadIdx.x; j < n; j += 32) o[j] = exp2f((r[j] - m) * 1.4426950408889634f) / s;
}
