/* Throughput of single AVX-512 operations and of pairs of them on this core, to tell which
 * operations share execution units (docs/performance.md, "Why bf16 fma ...", fourth step).
 * Eight independent operations per asm statement, N statements; thread CPU time.  Rates are
 * operations per nanosecond; divide by the clock (about 4.3 GHz here) for operations per
 * cycle.
 *
 *     gcc -O2 -o /tmp/vector_ops benchmarks/vector_ops.c && /tmp/vector_ops
 */
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define N 50000000L
#define CLOBBER "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "memory"
#define RUN(name, body)                                                                  \
    do {                                                                                 \
        double t = now();                                                                \
        for (long i = 0; i < N; i++) __asm__ volatile(body ::: CLOBBER);                 \
        double ns = (now() - t) / N * 1e9;                                               \
        printf("%-14s %5.2f ops/ns\n", name, 8 / ns);                                    \
    } while (0)

#define SHL(r) "vpslld $3, %%zmm8, %%zmm" #r "\n"
#define IADD(r) "vpaddd %%zmm8, %%zmm9, %%zmm" #r "\n"
#define FMUL(r) "vmulps %%zmm8, %%zmm9, %%zmm" #r "\n"
#define FADD(r) "vaddps %%zmm8, %%zmm9, %%zmm" #r "\n"
#define CVT(r) "vcvtdq2ps %%zmm8, %%zmm" #r "\n"
#define VSHR(r) "vpsrlvd %%zmm8, %%zmm9, %%zmm" #r "\n"
#define CMPK(k) "vpcmpgtd %%zmm8, %%zmm9, %%k" #k "\n"
#define ZX(r) "vpmovzxwd %%ymm8, %%zmm" #r "\n"
#define EIGHT(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7)
#define PAIRS(A, B) A(0) B(1) A(2) B(3) A(4) B(5) A(6) B(7)

int main(void) {
    __asm__ volatile("vpxord %%zmm8, %%zmm8, %%zmm8\n vpxord %%zmm9, %%zmm9, %%zmm9\n"
                     ::: "xmm8", "xmm9");
    RUN("add (int)", EIGHT(IADD));
    RUN("shift", EIGHT(SHL));
    RUN("var. shift", EIGHT(VSHR));
    RUN("float mul", EIGHT(FMUL));
    RUN("float add", EIGHT(FADD));
    RUN("int->float", EIGHT(CVT));
    RUN("compare->k", CMPK(1) CMPK(2) CMPK(3) CMPK(4) CMPK(5) CMPK(6) CMPK(7) CMPK(1));
    RUN("u16->u32", EIGHT(ZX));
    RUN("shift+add", PAIRS(SHL, IADD));
    RUN("shift+fmul", PAIRS(SHL, FMUL));
    RUN("shift+fadd", PAIRS(SHL, FADD));
    RUN("shift+cvt", PAIRS(SHL, CVT));
    RUN("fadd+cvt", PAIRS(FADD, CVT));
    RUN("fmul+fadd", PAIRS(FMUL, FADD));
    return 0;
}
