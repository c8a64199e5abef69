// grid-stride axpy: y[i] = a * x[i] + y[i] (f32, contracted to fma.rn.f32 by nvcc)
extern "C" __global__ void axpy(int n, float a, const float *x, float *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
