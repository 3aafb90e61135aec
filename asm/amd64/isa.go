package amd64

// ISA describes one vector instruction set the generator targets.
type ISA struct {
	Suffix string // appended to kernel names: "AVX2" or "AVX512"
	Name   string // in documentation comments
	Lanes  int    // float32 lanes per full vector register
	Regs   int    // architectural vector registers
}

// The two instruction sets: AVX2 with FMA, and AVX-512 (F, VL, BW, DQ).
var (
	AVX2   = ISA{Suffix: "AVX2", Name: "AVX2+FMA", Lanes: 8, Regs: 16}
	AVX512 = ISA{Suffix: "AVX512", Name: "AVX-512", Lanes: 16, Regs: 32}
)

// variant returns the name a generated package registers the ISA's kernels
// under and the Go expression that tells whether the CPU has it.
func (is ISA) variant() (name, available string) {
	if is.Lanes == 16 {
		return "avx512", "cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ"
	}
	return "avx2", "cpu.X86.HasAVX2 && cpu.X86.HasFMA"
}
