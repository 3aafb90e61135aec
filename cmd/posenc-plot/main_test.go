package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs posenc-plot in-process as `posenc plot ARGS` would (args[0]
// is "plot") and returns its exit status and output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args[1:], &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI("plot", "-h")
	if code != 0 || !strings.Contains(out, "Usage: posenc plot") || !strings.Contains(out, "-kind") || !strings.Contains(out, "-width") {
		t.Fatalf("posenc-plot -h: code %d, output:\n%s", code, out)
	}
}
