package cuda_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/verify/cudahost"
)

// TestAttnWaveFit runs the decode launcher's split fit, attn_wave_fit of a
// generated .cu (the ALiBi attention spec's, which has the decode kernel),
// on cases worked out by hand from its rule: the count n (the splits of
// ⌈ktiles/s⌉ tiles a count s gives, s from s0/2 to min(2·s0, smax)) that
// maximizes base·n / (⌈base·n/slots⌉·slots), ties to the nearest s0.
func TestAttnWaveFit(t *testing.T) {
	cxx, ok := cudahost.CXX()
	if !ok {
		t.Skip("no C++ compiler")
	}
	c := derive(t, attnSpecs[0])
	dir := write(t, c)
	name := c.Input().Name
	prog := `#include "posenc_cuda_host.h"
#include "` + name + `.cu"
#include <cstdio>
int main() {
	// 32 heads of one decode query, 32768 keys (1024 tiles), an H100's 132
	// SMs at 5 blocks each: 64 splits are 2048 items, 3.1 waves (0.78 of
	// the slots busy); 41 (chunks of 25 tiles) are 1312, 1.99 waves.
	std::printf("%lld\n", attn_wave_fit(32, 64, 64, 1024, 660));
	// 1024 slots: 32 and 64 splits both fill whole waves; the tie keeps 64.
	std::printf("%lld\n", attn_wave_fit(32, 64, 64, 1024, 1024));
	// Under one wave: the most items, 15 splits (chunks of 7 of 100 tiles;
	// 16 splits also give chunks of 7, so 15), up from 8.
	std::printf("%lld\n", attn_wave_fit(3, 8, 16, 100, 528));
	// Unknown slots, or nothing to split: s0.
	std::printf("%lld %lld\n", attn_wave_fit(32, 64, 64, 1024, 0), attn_wave_fit(32, 1, 64, 1024, 660));
	// The caps hold: smax 40 leaves 40 (1280 items, 0.97 of two waves)
	// where 41 was best.
	std::printf("%lld\n", attn_wave_fit(32, 64, 40, 1024, 660));
}
`
	for file, text := range map[string]string{cudahost.HeaderName: cudahost.Header, "fit.cpp": prog} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "fit")
	if msg, err := exec.Command(cxx, "-std=c++20", "-O1", "-fno-strict-aliasing", "-w", "-I", dir, "-o", exe, filepath.Join(dir, "fit.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"41", "64", "15", "64 1", "40"}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("attn_wave_fit:\n%s\nwant:\n%s", out, want)
	}
}
