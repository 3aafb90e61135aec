package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// signFlipPairs are the fused multiply-add mnemonics of the rope kernels
// and the one with the product's sign flipped: FMSUB/FMADD (AVX2, AVX-512
// half layout), FMADDSUB/FMSUBADD (interleaved) and FMLA/FMLS (NEON).
var signFlipPairs = map[string]string{
	"VFMADD231PS":    "VFMSUB231PS",
	"VFMSUB231PS":    "VFMADD231PS",
	"VFMADDSUB231PS": "VFMSUBADD231PS",
	"VFMSUBADD231PS": "VFMADDSUB231PS",
	"VFMLA":          "VFMLS",
	"VFMLS":          "VFMLA",
}

// signFlipFiles are the generated rope kernels whose FMA sites are sampled:
// half and interleaved (partial rotary) float32, and bf16 storage, each on
// amd64 (AVX2 and AVX-512) and arm64 (NEON), with the package test that
// must catch a flip and the sampling step that CI runs: every 32nd site (the
// 1st, the 33rd, …) of llama2_7b's amd64 rope kernels, every 128th of its NEON
// ones and of the other amd64 files, every 256th of the other NEON files (a
// qemu check costs 5–20 s; the steps were doubled twice to keep CI under 30
// minutes, each sample a subset of the one before, all of whose flips were caught), each kernel counted from its first site,
// and attnStepFactor times sparser in the attention form's kernels: a sample
// sized to CI's time. Each loop of a rope
// kernel (q in place and from a source, k, the inverse, the grouped and
// streaming token orders) holds 8 or more sites. `go run ./tools/mutate
// -every 4 -run 'asm sample'` samples every 4th site of each file (216
// mutants, all caught when this was written; about 25 minutes).
var signFlipFiles = []struct {
	file, check string
	every       int
}{
	{"generated/llama2_7b/llama2_7b_amd64.s", "test llama2_7b", 32},
	{"generated/llama2_7b/llama2_7b_arm64.s", "neon llama2_7b", 128},
	{"generated/gptj_6b/gptj_6b_amd64.s", "test gptj_6b", 128},
	{"generated/gptj_6b/gptj_6b_arm64.s", "neon gptj_6b", 256},
	{"internal/goldens/grope_bf16_half/grope_bf16_half_amd64.s", "golden grope_bf16_half", 128},
	{"internal/goldens/grope_bf16_half/grope_bf16_half_arm64.s", "neon golden grope_bf16_half", 256},
}

// attnStepFactor thins the sample in the attention form's kernels
// (scoresKV, valuesKV, expShift, …): their blocked and unrolled products hold
// five times the sites of the rope kernels, and each site's flip is a
// dot-product term the attention tests weigh like any other.
const attnStepFactor = 16

// ropeKernel reports whether the TEXT symbol sym ("·rotateAVX2(SB),") is
// one of rope's own kernels: rotate, farRows, scaleRows.
func ropeKernel(sym string) bool {
	for _, p := range []string{"·rotate", "·farRows", "·scaleRows"} {
		if strings.HasPrefix(sym, p) {
			return true
		}
	}
	return false
}

// signFlips returns the sampled sign-flip mutations of the files of
// signFlipFiles under root, read now so that the sample follows the
// generated code: each flips one instruction, found as the Nth occurrence
// of its mnemonic. every > 0 replaces each file's sampling step.
func signFlips(root string, every int) ([]Mutation, error) {
	var ms []Mutation
	for _, f := range signFlipFiles {
		step := f.every
		if every > 0 {
			step = every
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.file)))
		if err != nil {
			return nil, err
		}
		seen := map[string]int{} // occurrences of each mnemonic so far
		site, fnSite, fnStep := 0, 0, step
		for _, line := range strings.Split(string(src), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "TEXT" {
				// A new kernel: rope's own kernels at the file's step, the
				// attention form's (whose unrolled dot products hold most of
				// a file's sites) at attnStepFactor times it.
				fnSite, fnStep = 0, step
				if every == 0 && !ropeKernel(fields[1]) {
					fnStep = step * attnStepFactor
				}
			}
			if len(fields) < 2 {
				continue
			}
			to, ok := signFlipPairs[fields[0]]
			if !ok {
				continue
			}
			// Old is the mnemonic with its tab and trailing space, so that
			// VFMADD231PS never matches inside VFMADDSUB231PS.
			op := fields[0]
			seen[op]++
			if fnSite%fnStep == 0 {
				ms = append(ms, Mutation{
					Name:  fmt.Sprintf("asm sample: %s FMA site %d %s→%s", filepath.Base(f.file), site+1, op, to),
					File:  f.file,
					Old:   "\t" + op + " ",
					New:   "\t" + to + " ",
					Nth:   seen[op],
					Check: f.check,
				})
			}
			site++
			fnSite++
		}
		if site == 0 {
			return nil, fmt.Errorf("%s: no FMA site to sample", f.file)
		}
	}
	return ms, nil
}

// allMutations is the suite: the listed mutations and the sampled sign
// flips of the generated rope kernels under root (every: as signFlips).
func allMutations(root string, every int) ([]Mutation, error) {
	flips, err := signFlips(root, every)
	if err != nil {
		return nil, err
	}
	return slices.Concat(mutations, cudaAttentionMutations, flips), nil
}
