package spec

import "strings"

// knownOS and knownArch are the GOOS and GOARCH values the go command
// recognizes in file names (go/build's syslist): a file named
// x_linux.go, x_arm64.go or x_linux_arm64.go is built only there.
var (
	knownOS = wordSet(`aix android darwin dragonfly freebsd hurd illumos ios js
		linux nacl netbsd openbsd plan9 solaris wasip1 windows zos`)
	knownArch = wordSet(`386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips
		mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv
		riscv64 s390 s390x sparc sparc64 wasm`)
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// buildSuffix returns the part of name that the go command would read as
// a file-name build constraint of <name>.go ("_linux", "_arm64",
// "_linux_arm64"), or "" when there is none. The generated package's main
// file is <name>.go, so such a name would build on one platform only.
func buildSuffix(name string) string {
	parts := strings.Split(name, "_")
	n := len(parts)
	if n >= 3 && knownOS[parts[n-2]] && knownArch[parts[n-1]] {
		return "_" + parts[n-2] + "_" + parts[n-1]
	}
	if n >= 2 && (knownOS[parts[n-1]] || knownArch[parts[n-1]]) {
		return "_" + parts[n-1]
	}
	return ""
}
