package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// LoadSpecs resolves the command line's specs: each -zoo NAME from the
// embedded zoo, each argument as a YAML file path (or, when no such file
// exists and the argument is a zoo name, that zoo spec). With neither, the
// whole zoo. Names must be unique: they become package directories.
func LoadSpecs(zoo []string, args []string) ([]*spec.Spec, error) {
	var out []*spec.Spec
	if len(zoo) == 0 && len(args) == 0 {
		return spec.Zoo()
	}
	for _, name := range zoo {
		s, err := spec.ZooSpec(name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	for _, a := range args {
		ss, err := LoadFile(a)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	seen := map[string]string{}
	for _, s := range out {
		if prev, ok := seen[s.Name]; ok {
			return nil, fmt.Errorf("%s and %s both name package %q", prev, s.File, s.Name)
		}
		seen[s.Name] = s.File
	}
	return out, nil
}

// LoadOne loads a spec file, or a zoo spec by name when no such file
// exists. When neither exists, the error says both were tried.
func LoadOne(arg string) (*spec.Spec, error) {
	if _, err := os.Stat(arg); err != nil {
		if s, zerr := spec.ZooSpec(arg); zerr == nil {
			return s, nil
		}
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: no such spec file, and no zoo spec of that name (see 'posenc list')", arg)
		}
	}
	return spec.Load(arg)
}

// LoadFile loads every spec of a file (several YAML documents, as
// import-hf writes for Gemma 3, give several), or a zoo spec by name when
// no such file exists. When neither exists, the error says both were tried.
func LoadFile(arg string) ([]*spec.Spec, error) {
	if _, err := os.Stat(arg); err != nil {
		if s, zerr := spec.ZooSpec(arg); zerr == nil {
			return []*spec.Spec{s}, nil
		}
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: no such spec file, and no zoo spec of that name (see 'posenc list')", arg)
		}
	}
	return spec.LoadAll(arg)
}

// GenerateAll generates every spec first and writes only when all
// succeeded, so a bad spec leaves the disk untouched; each package is then
// written atomically into out/<name>/. A package that cannot be written
// (a full disk, a file in its place) does not stop the others: every one is
// tried, and the error names each package not written with its own error,
// and the packages that were. It returns the number written.
func GenerateAll(specs []*spec.Spec, out string, force bool) (int, error) {
	all := make([][]emit.File, len(specs))
	for i, s := range specs {
		files, err := gen.Generate(s)
		if err != nil {
			return 0, err
		}
		all[i] = files
	}
	var written, failed []string
	var errs []error
	for i, s := range specs {
		if err := gen.WritePackage(filepath.Join(out, s.Name), all[i], force); err != nil {
			failed = append(failed, s.Name)
			errs = append(errs, fmt.Errorf("%s: %w", s.Name, err))
			continue
		}
		written = append(written, s.Name)
	}
	if len(errs) == 0 {
		return len(written), nil
	}
	if len(specs) == 1 {
		return 0, errs[0]
	}
	done := "none written"
	if len(written) > 0 {
		done = "written: " + strings.Join(written, ", ")
	}
	summary := fmt.Errorf("%d of %d packages not written into %s: %s (%s)",
		len(failed), len(specs), out, strings.Join(failed, ", "), done)
	return len(written), errors.Join(append([]error{summary}, errs...)...)
}
