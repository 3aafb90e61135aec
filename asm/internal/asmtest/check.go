package asmtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
)

// disassemble assembles src (a complete arm64 .s file) with go tool asm and
// returns go tool objdump's text for each source line number.
func disassemble(t *testing.T, src []byte) map[int]string {
	t.Helper()
	dir := t.TempDir()
	s := filepath.Join(dir, "x_arm64.s")
	o := filepath.Join(dir, "x.o")
	if err := os.WriteFile(s, src, 0o644); err != nil {
		t.Fatal(err)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(strings.TrimSpace(string(goroot)), "pkg", "include")
	asm := exec.Command("go", "tool", "asm", "-p", "x", "-I", inc, "-o", o, s)
	asm.Env = append(os.Environ(), "GOARCH=arm64", "GOOS=linux")
	if out, err := asm.CombinedOutput(); err != nil {
		t.Fatalf("go tool asm: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "objdump", o).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool objdump: %v\n%s", err, out)
	}
	// "  x_arm64.s:12\t0x12\t\t4e22d420\t\tFADD V2.S4, V1.S4, V0.S4\t"
	re := regexp.MustCompile(`^\s*x_arm64\.s:(\d+)\s+0x[0-9a-f]+\s+([0-9a-f]{8})\s+(.*?)\s*$`)
	lines := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if _, dup := lines[n]; !dup { // first instruction of the line
			lines[n] = m[2] + " " + m[3]
		}
	}
	return lines
}

// CheckWords checks every "WORD $0x… // MNEMONIC" line of src against the
// disassembly and returns how many it checked.
func CheckWords(t *testing.T, src []byte) int {
	t.Helper()
	dis := disassemble(t, src)
	re := regexp.MustCompile(`^\tWORD \$0x([0-9a-f]{8}) // (.*)$`)
	n := 0
	for i, l := range strings.Split(string(src), "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n++
		want := m[1] + " " + m[2]
		if got := dis[i+1]; got != want {
			t.Errorf("line %d: %q disassembles as %q", i+1, want, got)
		}
	}
	return n
}

// HotLoop counts the instructions from label to the branch back to it
// (inclusive), skipping comments and labels.
func HotLoop(asm, label string) int {
	lines := strings.Split(asm, "\n")
	start := -1
	for i, l := range lines {
		if l == label+":" {
			start = i
			break
		}
	}
	if start < 0 {
		return 0
	}
	n := 0
	for _, l := range lines[start+1:] {
		if !strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "\t//") {
			continue
		}
		n++
		if strings.HasSuffix(l, " "+label) && strings.HasPrefix(l, "\tBNE") {
			return n
		}
	}
	return 0
}

// TestRopeInstructionCounts reports the instructions per rotated element of
// the per-head loop (Apply path), and bounds them.
// CheckAMD64 checks the file pair of an AVX package: names, header and
// build constraint lines, and the registration of both variants with the
// fields reg (e.g. "kernels{rotate: rotateAVX2}" with the AVX2 names; the
// AVX-512 line is derived).
func CheckAMD64(t *testing.T, files []emit.File, pkg, source, reg string) {
	t.Helper()
	if len(files) != 2 || files[0].Name != pkg+"_amd64.s" || files[1].Name != pkg+"_amd64.go" {
		t.Fatalf("%s: got files %v", pkg, Names(files))
	}
	for _, f := range files {
		lines := strings.SplitN(string(f.Data), "\n", 4)
		if lines[0] != emit.Header(source) {
			t.Errorf("%s: first line %q", f.Name, lines[0])
		}
		if lines[1] != "" || lines[2] != "//go:build amd64 && gc && !purego" {
			t.Errorf("%s: build constraint lines %q", f.Name, lines[1:3])
		}
		if strings.Contains(string(f.Data), "// +build") {
			t.Errorf("%s: has an old-style +build line", f.Name)
		}
	}
	goSrc := string(files[1].Data)
	for _, want := range []string{
		`registerVariant("avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA, ` + reg + ")",
		`registerVariant("avx512", cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ, ` + strings.ReplaceAll(reg, "AVX2", "AVX512") + ")",
		`import "golang.org/x/sys/cpu"`,
		"//go:noescape",
	} {
		if !strings.Contains(goSrc, want) {
			t.Errorf("%s_amd64.go lacks %q:\n%s", pkg, want, goSrc)
		}
	}
}

// CheckNEON checks the file pair of a NEON package: names, preamble, one
// final newline, the declarations decls and the registration reg.
func CheckNEON(t *testing.T, files []emit.File, pkg, source string, decls []string, reg string) {
	t.Helper()
	if len(files) != 2 || files[0].Name != pkg+"_arm64.s" || files[1].Name != pkg+"_arm64.go" {
		t.Fatalf("%s: files %v", pkg, Names(files))
	}
	for _, f := range files {
		lines := strings.Split(string(f.Data), "\n")
		if lines[0] != emit.Header(source) || lines[1] != "" || lines[2] != "//go:build arm64 && gc && !purego" || lines[3] != "" {
			t.Errorf("%s: bad preamble %q", f.Name, lines[:4])
		}
		if !bytes.HasSuffix(f.Data, []byte("\n")) || bytes.HasSuffix(f.Data, []byte("\n\n")) {
			t.Errorf("%s: must end in exactly one newline", f.Name)
		}
	}
	g := string(files[1].Data)
	for _, d := range decls {
		if !strings.Contains(g, "//go:noescape\n"+d+"\n") {
			t.Errorf("%s: missing %q in\n%s", pkg, d, g)
		}
	}
	if !strings.Contains(g, `registerVariant("neon", true, `+reg+")") {
		t.Errorf("%s: registration missing in\n%s", pkg, g)
	}
}

// Deterministic generates twice and compares the files byte for byte.
func Deterministic(t *testing.T, what string, gen func() ([]emit.File, error)) {
	t.Helper()
	a, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	b, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%s: %d files, then %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s: %s differs between runs", what, a[i].Name)
		}
	}
}

// Names lists the files' names.
func Names(fs []emit.File) []string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return n
}
