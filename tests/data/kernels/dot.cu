// dot product with a loop: each thread accumulates a strided partial sum in f32 (fma, in
// k order), stores it, then adds it into *out with atomicAdd (ptxfp applies the atomics of
// one instruction in thread order, lowest linear id first).
extern "C" __global__ void dot(int n, const float *x, const float *y, float *partial,
                               float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = i; k < n; k += blockDim.x * gridDim.x)
        acc += x[k] * y[k];
    partial[i] = acc;
    atomicAdd(out, acc);
}
