package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

func runGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", stdout)
	out := fs.String("o", "generated", "output directory; each spec becomes DIR/<name>/")
	force := fs.Bool("force", false, "replace package directories that hold files posenc did not generate")
	var zoo multiFlag
	fs.Var(&zoo, "zoo", "generate the named zoo spec (repeatable; see 'posenc list')")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	specs, err := loadSpecs(zoo, fs.Args())
	if err != nil {
		return err
	}
	n, err := generateAll(specs, *out, *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "posenc: wrote %s into %s\n", plural(n, "package"), *out)
	return nil
}

// generateAll generates every spec first and writes only when all
// succeeded, so a bad spec leaves the disk untouched; each package is then
// written atomically.
func generateAll(specs []*spec.Spec, out string, force bool) (int, error) {
	all := make([][]emit.File, len(specs))
	for i, s := range specs {
		files, err := gen.Generate(s)
		if err != nil {
			return 0, err
		}
		all[i] = files
	}
	for i, s := range specs {
		if err := gen.WritePackage(filepath.Join(out, s.Name), all[i], force); err != nil {
			return i, err
		}
	}
	return len(specs), nil
}

// plural formats n with word, adding an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
