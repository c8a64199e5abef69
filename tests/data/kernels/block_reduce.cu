// block reduction: each block sums 2*blockDim.x floats in shared memory (tree, bar.sync),
// thread 0 writes the block's sum to out[blockIdx.x]. blockDim.x must be a power of two <= 256.
extern "C" __global__ void block_reduce(const float *x, float *out, int n) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    float v = 0.0f;
    if (i < n) v = x[i];
    if (i + blockDim.x < n) v += x[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
