// NEON instruction encodings Go's assembler lacks (register numbers are
// plain integers, V0..V31) and small helpers, shared by dot_arm64.s and
// dot4_arm64.s.

// Vd.8H = Vn.8B × Vm.8B (signed), and the accumulate / upper-half forms.
#define SMULL8H(d, n, m) WORD $(0x0E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define SMULL2_8H(d, n, m) WORD $(0x4E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL8H(d, n, m) WORD $(0x0E208000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL2_8H(d, n, m) WORD $(0x4E208000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = Vn.4H × Vm.4H (signed); SMLAL2_4S accumulates the upper halves.
#define SMULL4S(d, n, m) WORD $(0x0E60C000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL4S(d, n, m) WORD $(0x0E608000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL2_4S(d, n, m) WORD $(0x4E608000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S += Vn.4H × Vm.H[i] (lower / upper four lanes of Vn); m ≤ 15.
#define SMLALE(d, n, m, i) WORD $(0x0F402000 | ((((i)>>2)&1)<<11) | ((((i)>>1)&1)<<21) | (((i)&1)<<20) | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL2E(d, n, m, i) WORD $(0x4F402000 | ((((i)>>2)&1)<<11) | ((((i)>>1)&1)<<21) | (((i)&1)<<20) | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = pairwise sums of Vn.8H (SADDLP), or += (SADALP).
#define SADDLP4S(d, n) WORD $(0x4E602800 | ((n)<<5) | (d))
#define SADALP4S(d, n) WORD $(0x4E606800 | ((n)<<5) | (d))
// Vd.8H = sign-extended Vn.8B (lower / upper half).
#define SXTL8H(d, n) WORD $(0x0F08A400 | ((n)<<5) | (d))
#define SXTL2_8H(d, n) WORD $(0x4F08A400 | ((n)<<5) | (d))
// Vd.4S = float(Vn.4S int32).
#define SCVTF4S(d, n) WORD $(0x4E21D800 | ((n)<<5) | (d))
// Vd.4S += Vn.4S × Vm.S[0].
#define FMLAS0(d, n, m) WORD $(0x4F801000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = Vn.4S + Vm.4S; pairwise add; Sd = Vn.S[0] + Vn.S[1].
#define FADD4S(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FADDP4S(d, n, m) WORD $(0x6E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FADDPS(d, n) WORD $(0x7E30D800 | ((n)<<5) | (d))
// Vd.4S = float(Vn.4H half) lower / upper half.
#define FCVTL4S(d, n) WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2_4S(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))

// F9 = fp16(R4) * fp16(R5).
#define DPRODH \
	FMOVS R4, F9; \
	FCVTHS F9, F9; \
	FMOVS R5, F10; \
	FCVTHS F10, F10; \
	FMULS F10, F9, F9

// F0 = horizontal sum of V16.4S.
#define HSUM16 \
	FADDP4S(16, 16, 16); \
	FADDPS(0, 16)


// Vd.4S += Σ of each 4 consecutive Vn.16B × Vm.16B (signed int8, exact).
#define SDOT4S(d, n, m) WORD $(0x4E809400 | ((m)<<16) | ((n)<<5) | (d))

// Vd.4S += Vn.4S × Vm.S[i] (int32); Vd.4S = sign-extended Vn.4H (lower/upper).
#define MLAS(d, n, m, i) WORD $(0x6F800000 | (((i)&1)<<21) | ((((i)>>1)&1)<<11) | ((m)<<16) | ((n)<<5) | (d))
#define SXTL4S(d, n) WORD $(0x0F10A400 | ((n)<<5) | (d))
#define SXTL2_4S(d, n) WORD $(0x4F10A400 | ((n)<<5) | (d))
