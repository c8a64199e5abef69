// __syncwarp between a warp's shared-memory writes and reads (bar.warp.sync): each lane
// publishes its value, then reads its right neighbour's; a second round after a partial-mask
// __syncwarp among the even lanes.
__global__ void warp_rotate(const float* x, float* y, float* z)
{
    __shared__ float s[32];
    int l = threadIdx.x & 31;
    s[l] = x[threadIdx.x];
    __syncwarp();
    float v = s[(l + 1) & 31];
    y[threadIdx.x] = v;
    __syncwarp();
    if ((l & 1) == 0) {
        s[l] = v * 2.0f;
        __syncwarp(0x55555555);
        z[threadIdx.x] = s[(l + 2) & 31];
    }
}
