package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	alibi "github.com/posenc/posenc/generated/bloom_7b1"
	rope "github.com/posenc/posenc/generated/llama2_7b"
)

// peakRSS allocates the keys and values of a decode step over keys keys (32
// query heads of 128 over kv KV heads), runs each decode form once per
// variant, and prints the process's peak resident set (VmHWM) next to the
// K+V bytes: the attention form's own memory is the difference (scratch is
// O(tile), plus the Go runtime and the binary).
func peakRSS(keys, kv int) {
	debug.SetGCPercent(-1) // nothing else allocates; keep the figure the program's own
	const qh, hd = 32, 128
	n := keys * kv * hd
	k, v := make([]float32, n), make([]float32, n)
	for i := range k {
		k[i], v[i] = float32(i%5-2)/4, float32(i%3-1)/2
	}
	q, out := make([]float32, qh*hd), make([]float32, qh*hd)
	for i := range q {
		q[i] = float32(i%7-3) / 8
	}
	kpos := make([]int32, keys)
	for j := range kpos {
		kpos[j] = int32(j)
	}
	qpos := kpos[keys-1:]
	o := rope.AttentionOptions{QHeads: qh, KVHeads: kv, Scale: 0.088, Causal: true}
	for _, vn := range []string{"go", "avx2", "avx512"} {
		if !rope.VariantAvailable(vn) {
			continue
		}
		restore := rope.UseVariant(vn)
		rope.Attention(out, q, k, v, qpos, kpos, o)
		rope.AttentionRotated(out, q, k, v, qpos, kpos, o)
		restore()
		if kv == qh {
			restore = alibi.UseVariant(vn)
			alibi.Attention(out, q, k, v, qpos, kpos, alibi.AttentionOptions{QHeads: qh, KVHeads: kv, Scale: 0.088, Causal: true})
			restore()
		}
	}
	kvBytes := int64(8 * n)
	hwm := vmHWM()
	fmt.Printf("decode over %d keys, %d/%d heads × %d: K+V %d MiB, peak RSS %d MiB, peak RSS − K+V = %.1f MiB\n",
		keys, qh, kv, hd, kvBytes>>20, hwm>>20, float64(hwm-kvBytes)/(1<<20))
}

// vmHWM is the peak resident set of this process in bytes (Linux).
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, "attnratio:", err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
			return kb << 10
		}
	}
	fmt.Fprintln(os.Stderr, "attnratio: no VmHWM in /proc/self/status")
	os.Exit(1)
	return 0
}
