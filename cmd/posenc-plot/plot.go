package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/posenc/posenc/internal/cli"
	"github.com/posenc/posenc/plot"
	"github.com/posenc/posenc/spec"
)

// kindPattern is the placeholder of -o that -kind all replaces by each
// kind's name.
const kindPattern = "{kind}"

func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stdout)
	out := fs.String("o", "", "output image: FILE.png or FILE.svg (with -kind all, a name containing "+kindPattern+")")
	kind := fs.String("kind", "", "picture to draw (default: the encoding's first): "+strings.Join(plot.AllKinds(), ", ")+", or all")
	zoo := fs.String("zoo", "", "plot the named zoo spec instead of a SPEC.yaml argument")
	name := fs.String("name", "", "of a SPEC.yaml holding several specs (as import-hf writes for Gemma 3), plot the one of this name")
	width := fs.Int("width", 800, "image width in pixels (SVG: ×0.75 points)")
	height := fs.Int("height", 500, "image height in pixels (SVG: ×0.75 points)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var s *spec.Spec
	var err error
	switch {
	case *zoo != "" && fs.NArg() == 0:
		s, err = spec.ZooSpec(*zoo)
	case *zoo == "" && fs.NArg() == 1:
		s, err = pickSpec(fs.Arg(0), *name)
	default:
		return fmt.Errorf("%w: plot takes one spec: a SPEC.yaml argument or -zoo NAME", cli.ErrUsage)
	}
	if err != nil {
		return err
	}
	if *name != "" && s.Name != *name {
		return fmt.Errorf("%w: -name %s: the spec is %s", cli.ErrUsage, *name, s.Name)
	}
	if *out == "" {
		return fmt.Errorf("%w: -o FILE.png|FILE.svg is required", cli.ErrUsage)
	}
	if _, err := plot.Format(*out); err != nil {
		return fmt.Errorf("%w: -o: %v", cli.ErrUsage, err)
	}
	if err := plot.CheckSize(*width, *height); err != nil {
		return fmt.Errorf("%w: -width, -height: %v", cli.ErrUsage, err)
	}
	kinds, err := plotKinds(s, *kind, *out)
	if err != nil {
		return err
	}
	// Draw every picture before writing any, so that a failure writes nothing.
	figs := make([]*plot.Figure, len(kinds))
	for i, k := range kinds {
		if figs[i], err = renderKind(s, k, stderr); err != nil {
			return err
		}
	}
	for i, k := range kinds {
		path := strings.ReplaceAll(*out, kindPattern, k)
		if err := plot.Save(figs[i], path, *width, *height); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "posenc: wrote %s (%s %s)\n", path, s.Name, k)
	}
	return nil
}

// pickSpec loads the spec file (or zoo name) arg: its one spec, or of a
// file holding several, the one called name, which must then be given.
func pickSpec(arg, name string) (*spec.Spec, error) {
	specs, err := cli.LoadFile(arg)
	if err != nil {
		return nil, err
	}
	if len(specs) == 1 {
		return specs[0], nil
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		if s.Name == name {
			return s, nil
		}
		names[i] = s.Name
	}
	if name == "" {
		return nil, fmt.Errorf("%w: %s holds %d specs (%s): choose one with -name", cli.ErrUsage, arg, len(specs), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%w: -name %s: %s holds no such spec, only %s", cli.ErrUsage, name, arg, strings.Join(names, ", "))
}

// plotKinds resolves -kind for the spec: the default kind when empty,
// every kind of the encoding for "all" (then -o must hold {kind}).
func plotKinds(s *spec.Spec, kind, out string) ([]string, error) {
	switch kind {
	case "":
		k, err := plot.DefaultKind(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", cli.ErrUsage, s.Name, err)
		}
		return []string{k}, nil
	case "all":
		ks := plot.Kinds(s.Encoding)
		if len(ks) == 0 {
			_, err := plot.DefaultKind(s)
			return nil, fmt.Errorf("%w: %s: %v", cli.ErrUsage, s.Name, err)
		}
		if !strings.Contains(out, kindPattern) {
			return nil, fmt.Errorf("%w: -kind all writes one file per kind: -o must contain %s (e.g. -o img/%s-%s.svg)", cli.ErrUsage, kindPattern, s.Name, kindPattern)
		}
		return ks, nil
	}
	if err := plot.CheckKind(s, kind); err != nil {
		return nil, fmt.Errorf("%w: -kind: %s: %v", cli.ErrUsage, s.Name, err)
	}
	if strings.Contains(out, kindPattern) {
		return nil, fmt.Errorf("%w: -o contains %s, which only -kind all fills in", cli.ErrUsage, kindPattern)
	}
	return []string{kind}, nil
}

// renderKind draws one kind; the error kind first measures the generated
// kernels.
func renderKind(s *spec.Spec, kind string, progress io.Writer) (*plot.Figure, error) {
	if kind != plot.KindError {
		return plot.Render(s, kind)
	}
	c, err := measureError(s, progress)
	if err != nil {
		return nil, err
	}
	return plot.RenderError(s, c)
}

// measureError generates the spec's package into a scratch directory inside
// the module, adds the measuring test of errorProgram to it, runs that test
// and parses its lines.
func measureError(s *spec.Spec, progress io.Writer) (*plot.ErrorCurves, error) {
	root, err := cli.ModuleRoot()
	if err != nil {
		return nil, fmt.Errorf("-kind error generates and runs the kernels inside the current Go module: %w", err)
	}
	dir, done, err := cli.ScratchDir(root, "plot")
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := cli.GenerateAll([]*spec.Spec{s}, dir, false); err != nil {
		return nil, err
	}
	pkgDir := filepath.Join(dir, s.Name)
	positions := plot.ErrorPositions(s)
	if err := os.WriteFile(filepath.Join(pkgDir, errorProgramFile), errorProgram(s, positions), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "posenc: measuring %s's kernels at %d positions\n", s.Name, len(positions))
	pkg := "./" + filepath.ToSlash(cli.Rel(root, pkgDir))
	out, err := cli.RunCapture(cli.GoCmd(root, nil, "test", "-count=1", "-v", "-run", "^"+errorProgramTest+"$", pkg))
	if err != nil {
		return nil, fmt.Errorf("measuring the error of %s failed:\n%s", s.Name, cli.Tail(out, 40))
	}
	return parseErrorLines(out, positions)
}
