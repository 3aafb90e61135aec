package main

import (
	"os/exec"
	"strings"
	"testing"
)

// plottingModules are the modules of gonum/plot's drawing stack: fonts,
// LaTeX, PDF, SVG and image code. posenc must not import them, so that a
// module depending on posenc for generation vendors none of them (they
// belong to cmd/posenc-plot).
var plottingModules = []string{"gonum.org/", "codeberg.org/", "git.sr.ht/", "github.com/ajstarks/", "github.com/golang/freetype", "golang.org/x/image"}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

func plotting(pkgs []string) []string {
	var hit []string
	for _, p := range pkgs {
		for _, m := range plottingModules {
			if strings.HasPrefix(p, m) {
				hit = append(hit, p)
			}
		}
	}
	return hit
}

func TestPosencImportsNoPlotting(t *testing.T) {
	if hit := plotting(deps(t, "github.com/posenc/posenc/cmd/posenc")); len(hit) > 0 {
		t.Errorf("cmd/posenc imports the plotting stack (downstream vendor/ grows by megabytes): %s", strings.Join(hit, " "))
	}
	// The list above must name what posenc-plot really pulls in.
	if hit := plotting(deps(t, plotCommand)); len(hit) == 0 {
		t.Errorf("%s imports none of %v: the list is out of date", plotCommand, plottingModules)
	}
}
