// warp reduction with shfl.sync: each warp sums its 32 values (butterfly order: down by
// 16, 8, 4, 2, 1); lane 0 writes out[warp]. Also a warp-wide ballot of x > 0.
extern "C" __global__ void warp_reduce(const float *x, float *out, unsigned *ballots) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    unsigned b = __ballot_sync(0xffffffffu, v > 0.0f);
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) {
        out[i / 32] = v;
        ballots[i / 32] = b;
    }
}
