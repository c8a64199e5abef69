/* A bf16 fma as simulators and emulators commonly write it: the operands widened to float,
 * a*b + c computed in binary32, the result rounded to bf16 -- two roundings, where PTX's
 * fma.rn.bf16 rounds once.  Both calling conventions `ptxfp sweep --lib` takes:
 *
 *   cc -O2 -ffp-contract=off -shared -fPIC examples/sim_fma_bf16.c -o libsim.so
 *   ptxfp sweep fma.rn.bf16 --lib ./libsim.so:sim_fma_bf16_array --random 10000000
 *   ptxfp sweep fma.rn.bf16 --lib ./libsim.so:sim_fma_bf16 --lib-kind elementwise --random 10000000
 *
 * (-ffp-contract=off keeps the compiler from fusing a*b + c into one fmaf, which would round
 * once in binary32 and still once more into bf16.)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static float bf16_to_float(uint16_t x)
{
    uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t float_to_bf16_rne(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;                              /* PTX's canonical NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* elementwise: uint16_t f(uint16_t a, uint16_t b, uint16_t c) */
uint16_t sim_fma_bf16(uint16_t a, uint16_t b, uint16_t c)
{
    float p = bf16_to_float(a) * bf16_to_float(b);
    float s = p + bf16_to_float(c);
    return float_to_bf16_rne(s);
}

/* array: void f(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *d, size_t n) */
void sim_fma_bf16_array(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *d,
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = sim_fma_bf16(a[i], b[i], c[i]);
}
