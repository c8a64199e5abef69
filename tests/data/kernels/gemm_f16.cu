// tiled GEMM, f16 inputs, f32 accumulation: C[M,N] = A[M,K] * B[K,N], row-major, TILE x TILE
// tiles staged in shared memory; M, N, K multiples of TILE; block = (TILE, TILE).
#include <cuda_fp16.h>
#define TILE 16
extern "C" __global__ void gemm_f16(const __half *A, const __half *B, float *C,
                                    int M, int N, int K) {
    __shared__ __half As[TILE][TILE];
    __shared__ __half Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc = fmaf(__half2float(As[threadIdx.y][k]), __half2float(Bs[k][threadIdx.x]), acc);
        __syncthreads();
    }
    C[row * N + col] = acc;
}
