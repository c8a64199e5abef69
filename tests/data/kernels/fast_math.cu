// The SFU intrinsics a kernel author reaches for (issue 31): each output is one .approx
// instruction of the input (nvcc 13.0 -arch=sm_80 -prec-sqrt=false, no -ftz: the non-.ftz
// forms sin/cos/lg2/rsqrt/sqrt.approx.f32).
__global__ void fast_math(const float* x, float* s, float* c, float* l, float* r, float* q,
                          int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    s[i] = __sinf(v);
    c[i] = __cosf(v);
    l[i] = __log2f(v);
    r[i] = rsqrtf(v);
    q[i] = sqrtf(v);
}
