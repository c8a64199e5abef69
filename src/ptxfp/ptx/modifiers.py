"""PTX's modifier vocabulary: every dotted token ptxas 13.0 (V13.0.88) reads as a modifier, as data.

Source: a probe of ptxas 13.0 (V13.0.88) (tools/modifier_probe.py, recorded in
tests/data/ptxas/modifiers.json; this file is written from that record by
``python tools/modifier_probe.py --emit``).  The probe wrote 104179 candidate tokens (the
identifier-like strings of the ptxas binary, plain and ROT13-decoded, every token of
tests/data/realworld/*.ptx and of ptxfp's spelling tables) after each of the 199
instruction names of opcodes.py (:data:`HOSTS`; after the others nothing is checked), as
``NAME.TOKEN;``, and kept the tokens for which ptxas did
not say "Unknown modifier '.TOKEN'".  Most are known after every name (:data:`EVERYWHERE`);
a few not after some names (:data:`NOT_AFTER`: ``.mbarrier`` and ``.cc`` not after
``membar`` or ``ret``).  ``.arrive`` after ``bar`` and ``.expect_tx`` after ``mbarrier.arrive``
are no modifiers but longer names ptxas reads whole (:data:`LONGER_NAMES`).  Tokens not starting with a lowercase letter (``L2``, ``NaN``)
were written after a few names only (bar, ld, cvt, tcgen05.mma) and count as known after every name when
known after one of those; tokens starting with a digit (``16x64b``, ``2d``) only where the
real-world modules or the tables have them, so they are not checked.

Data only: opcodes.known_modifier and opcodes.unknown_modifiers read it.
"""

from __future__ import annotations

__all__ = ["EVERYWHERE", "NOT_AFTER", "HOSTS", "LONGER_NAMES", "SOURCE"]

SOURCE = "a probe of ptxas 13.0 (V13.0.88) (tools/modifier_probe.py, tests/data/ptxas/modifiers.json)"

#: tokens ptxas knows as modifiers after every instruction name
EVERYWHERE = frozenset("""
0 1 10 100 101 102 1023 1024 103 104 105 1062 1068 107 1073 1073758272 108 1082 109 1091 1095
11 110 111 1111 112 114 115 116 117 118 119 12 120 121 127 128 13 135 136314896 14 144 149 15
154 156 16 16256 16384 17 177 18 19 192 1920 1d 2 20 2019 21 22 228 23 232 24 24576 25 256 26
2638 2640 2648 2650 27 2714 2716 28 2d 3 300 31 32 32768 32x32b 33 35 36 36424714 37 38 384 39
3d 4 4096 44 46 4611686293305294848 464 47 48 49 49152 5 504 51 512 514 516 518 52 53 54 55 56
57 58 59 6 60 6144 62 6291456 63 64 65 65536 68 69 7 70 71 72 73 74 75 754 76 78 8 80 8192
81920 82 83 84 86 88 89 9 90 93 95 96 97 98 98304 98312 98320 98336 98344 99 L1 L1::evict_first
L1::evict_last L1::evict_normal L1::evict_unchanged L1::no_allocate L2 L2::128B L2::256B
L2::64B L2::cache_hint L2::evict_first L2::evict_last L2::evict_normal L2::evict_unchanged
L2::no_allocate NaN a a1d a2d a2dms abs acc::f16 acc::f32 acq_rel acquire acube add addr_mode_0
addr_mode_1 addr_mode_2 alias aligned all alloc and any approx array_size ashift async b b1
b1024 b128 b16 b2 b32 b4e b4x16_p64 b64 b6x16_p32 b8 b8x16 ballot bf16 bf16x2 bfly block16
block32 block_scale box_dim ca cas cg channel_data_type channel_order col collector::a::discard
collector::a::fill collector::a::lastuse collector::a::use collector::b0::discard
collector::b0::fill collector::b0::lastuse collector::b0::use collector::b1::discard
collector::b1::fill collector::b1::lastuse collector::b1::use collector::b2::discard
collector::b2::fill collector::b2::lastuse collector::b2::use collector::b3::discard
collector::b3::fill collector::b3::lastuse collector::b3::use const cp cp_mask cs cta
cta_group::1 cta_group::2 cube cv dealloc dec depth dis down e0m3x2 e0m3x4 e2m1 e2m1x2 e2m1x4
e2m3 e2m3x2 e2m3x4 e3m2 e3m2x2 e3m2x4 e4m3 e4m3x2 e4m3x4 e5m2 e5m2x2 e5m2x4 ecl element_stride
elemtype en eq equ evict_first evict_last evict_normal evict_unchanged exch f16 f16x2 f32 f32x2
f4e f64 fill_mode filter_mode finite force_unnormalized_coords ftz g ge get_first_ctaid
get_first_ctaid::x get_first_ctaid::y get_first_ctaid::z geu gl global global_address
global_dim global_stride gpu gt gtu height hi hs idx ignoreC ignoreC_pred im2col im2col::w
im2col::w::128 im2col_no_offs inc infinite interleave_layout inv invall is_canceled kind::f16
kind::f8f6f4 kind::i8 kind::mxf4 kind::mxf4nvf4 kind::mxf8f6f4 kind::tf32 launch_dependents ld
le leu lo local ls lt ltu lu m16n16 m16n16k16 m16n16k8 m16n8 m16n8k128 m16n8k16 m16n8k256
m16n8k32 m16n8k4 m16n8k64 m16n8k8 m32n8k16 m64n104k16 m64n104k32 m64n104k64 m64n104k8
m64n112k16 m64n112k256 m64n112k32 m64n112k64 m64n112k8 m64n120k16 m64n120k32 m64n120k64
m64n120k8 m64n128k16 m64n128k256 m64n128k32 m64n128k64 m64n128k8 m64n136k16 m64n136k32
m64n136k64 m64n136k8 m64n144k16 m64n144k256 m64n144k32 m64n144k64 m64n144k8 m64n152k16
m64n152k32 m64n152k64 m64n152k8 m64n160k16 m64n160k256 m64n160k32 m64n160k64 m64n160k8
m64n168k16 m64n168k32 m64n168k64 m64n168k8 m64n16k16 m64n16k256 m64n16k32 m64n16k64 m64n16k8
m64n176k16 m64n176k256 m64n176k32 m64n176k64 m64n176k8 m64n184k16 m64n184k32 m64n184k64
m64n184k8 m64n192k16 m64n192k256 m64n192k32 m64n192k64 m64n192k8 m64n200k16 m64n200k32
m64n200k64 m64n200k8 m64n208k16 m64n208k256 m64n208k32 m64n208k64 m64n208k8 m64n216k16
m64n216k32 m64n216k64 m64n216k8 m64n224k16 m64n224k256 m64n224k32 m64n224k64 m64n224k8
m64n232k16 m64n232k32 m64n232k64 m64n232k8 m64n240k16 m64n240k256 m64n240k32 m64n240k64
m64n240k8 m64n248k16 m64n248k32 m64n248k64 m64n248k8 m64n24k16 m64n24k256 m64n24k32 m64n24k64
m64n24k8 m64n256k16 m64n256k256 m64n256k32 m64n256k64 m64n256k8 m64n32k16 m64n32k256 m64n32k32
m64n32k64 m64n32k8 m64n40k16 m64n40k32 m64n40k64 m64n40k8 m64n48k16 m64n48k256 m64n48k32
m64n48k64 m64n48k8 m64n56k16 m64n56k32 m64n56k64 m64n56k8 m64n64k16 m64n64k256 m64n64k32
m64n64k64 m64n64k8 m64n72k16 m64n72k32 m64n72k64 m64n72k8 m64n80k16 m64n80k256 m64n80k32
m64n80k64 m64n80k8 m64n88k16 m64n88k32 m64n88k64 m64n88k8 m64n8k16 m64n8k256 m64n8k32 m64n8k64
m64n8k8 m64n96k16 m64n96k256 m64n96k32 m64n96k64 m64n96k8 m8n16 m8n32k16 m8n8 m8n8k128 m8n8k16
m8n8k32 m8n8k4 m8n8k64 matrix::A matrix::D matrix::scaleA matrix::scaleB matrix::sparseMetadata
max maxabs mbarrier::arrive::one mbarrier::complete_tx::bytes mbarrier_init memory_layout min
mma mmio multicast multicast::cluster multicast::cluster::all nan nc ne negA negB neu
noComplete no_allocate no_membermask_overlap noftz noinc normal normalized_coords notanumber
num num_mipmap_levels num_samples number oob or param po popc pred r rank rc16 rc8 read
regoffset relaxed release relu rm rmi rn rna rni row rp rpi rs rz rzi s16 s16x2 s2 s32 s4 s64
s8 safeadd samplerref sat satfinite sc scale_vec::1X scale_vec::2X scale_vec::4X shared
shared::cluster shared::cta shift shiftamt shr15 shr7 sp sp::ordered_metadata st subnormal
surfref swizzle_atomicity swizzle_mode sync sync_restrict::shared::cluster
sync_restrict::shared::cta sys tensormap tex texref tf32 thread tile tile::gather4
tile::scatter4 trans transA transB trap u16 u16x2 u2 u32 u4 u64 u8 ue4m3 ue8m0 ue8m0x2 ue8m0x4
unanimous uni unpack::16b up v2 v4 v8 volatile wait warpx2::01_23 warpx2::02_13 wb weak width
wrap wt x1 x128 x16 x2 x32 x4 x64 x8 xor xorsign zero
""".split())

#: the names after which several tokens of NOT_AFTER are unknown
_NOT_AFTER_0 = frozenset("""
barrier.cluster.arrive barrier.cluster.wait brkpt cp.async.bulk.commit_group
cp.async.commit_group cp.async.wait_all exit fence griddepcontrol membar ret tcgen05.fence
tcgen05.relinquish_alloc_permit tcgen05.wait trap wgmma.commit_group wgmma.fence
""".split())

#: tokens ptxas knows as modifiers after every instruction name of HOSTS but these
NOT_AFTER = {
    'async::generic': frozenset('red st'.split()),
    'bulk_group': frozenset('applypriority cp.async discard st'.split()),
    'cc': _NOT_AFTER_0,
    'clamp': frozenset('tex'.split()),
    'cluster': frozenset('barrier'.split()),
    'lower::16b': frozenset('dp2a mad mul'.split()),
    'mbarrier': _NOT_AFTER_0,
    'mbarrier::meet_tx::bytes': _NOT_AFTER_0,
    'pack::16b': frozenset('cvt'.split()),
    'tensormap::generic': frozenset('cp.async.bulk cp.async.bulk.prefetch cp.reduce.async.bulk'.split()),
    'warpx4': frozenset('bar barrier'.split()),
}

#: dotted names ptxas reads whole beyond opcodes.py's (their tokens are no modifiers)
LONGER_NAMES = tuple("""
abs.f16 abs.f16x2 add.u32 and.b32 bar.arrive bar.cta bar.cta.arrive bar.cta.red bar.red
bar.warp barrier.cta barrier.cta.arrive barrier.cta.red barrier.red cp.async.mbarrier cvt.f16
cvt.f16.f32 cvt.f16x2 cvt.f16x2.f32 cvt.rp cvt.rp.f32 cvt.rp.f32.u32 cvt.rpi cvt.rpi.u32
cvt.rpi.u32.f32 cvt.tf32 cvt.tf32.f32 cvt.tf32.f32.rna cvt.u32 cvt.u32.u64 cvta.const cvta.to
div.full div.rn div.rn.f64 div.rp div.rp.f32 dp2a.hi dp2a.lo ex2.f16 fence.proxy fma.f32
fma.f64 ld.nc ld.param ld.param.b32 ld.r mad.f32 mad.hi mad.lo mad.wide match.any max.f16
max.f16x2 mbarrier.arrive.expect_tx mbarrier.arrive_drop.expect_tx mbarrier.test_wait.parity
mbarrier.try_wait.parity membar.proxy membar.sys min.f16 min.f16x2 mma.sp mov.u32 mul.hi mul.lo
mul.lo.u32 mul.wide neg.f16 neg.f16x2 pmevent.mask rcp.approx rcp.approx.f64 rcp.rn rcp.rn.f64
rsqrt.approx rsqrt.approx.ftz rsqrt.approx.ftz.f64 selp.u32 setp.eq setp.eq.u32 shr.u32 sqrt.rn
sqrt.rn.f64 st.b16 st.param st.param.b16 st.param.b32 tcgen05.ld.red tcgen05.mma.ws tex.base
tex.grad tex.level tex.uni tld4.uni txq.level vote.ballot
""".split())

#: the instruction names the probe wrote tokens after
HOSTS = frozenset("""
bar ld cvt tcgen05.mma add and atom bar.warp.sync barrier barrier.cluster.arrive
barrier.cluster.wait bfe bra clusterlaunchcontrol.try_cancel.async cp.async cp.async.bulk
cp.async.bulk.commit_group cp.async.bulk.tensor cp.async.bulk.wait_group cp.async.commit_group
cp.async.wait_all cp.async.wait_group cvta elect.sync exit fence fma griddepcontrol ldmatrix
mad mbarrier.arrive mbarrier.init mbarrier.inval mbarrier.try_wait mma mov mul
multimem.ld_reduce not or prmt red.async ret selp setmaxnreg.inc setp shfl.sync shl shr st
st.async stmatrix sub tcgen05.alloc tcgen05.commit tcgen05.dealloc tcgen05.fence tcgen05.ld
tcgen05.relinquish_alloc_permit tcgen05.st tcgen05.wait tensormap.cp_fenceproxy
tensormap.replace wgmma.commit_group wgmma.fence wgmma.mma_async wgmma.wait_group xor abs
activemask add.cc addc alloca applypriority bfi bfind bmsk brev brkpt brx.idx
clusterlaunchcontrol.query_cancel clz cnot copysign cos cp.async.bulk.prefetch
cp.async.bulk.prefetch.tensor cp.async.mbarrier.arrive cp.reduce.async.bulk
cp.reduce.async.bulk.tensor createpolicy.cvt createpolicy.fractional createpolicy.range
cvt.pack discard div dp2a dp4a elect ex2 fns getctarank isspacep istypep ldu lg2 lop3 mad.cc
mad24.hi mad24.lo madc.hi madc.lo mapa match match.sync max mbarrier.arrive_drop
mbarrier.complete_tx mbarrier.expect_tx mbarrier.pending_count mbarrier.test_wait membar min
movmatrix mul24.hi mul24.lo multimem.red multimem.st nanosleep neg pmevent popc prefetch
prefetchu rcp red redux redux.sync rem rsqrt sad set setmaxnreg.dec shf.l shf.r shfl sin slct
sqrt st.bulk stackrestore stacksave sub.cc subc suld.b suq sured.b sured.p sust.b sust.p szext
tanh tcgen05.cp tcgen05.shift testp tex tld4 trap txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2
vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote vote.sync vset vset2 vset4 vshl
vshr vsub vsub2 vsub4 wmma.load.a wmma.load.b wmma.load.c wmma.mma wmma.store.d
""".split())
