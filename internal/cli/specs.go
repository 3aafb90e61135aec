package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/posenc/posenc/gen"
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
// succeeded, so a bad spec leaves the disk untouched; the packages are then
// written into out/<name>/ all or nothing (gen.WritePackages: staged beside
// them, committed by a journal, then moved into place; each package
// directory is also replaced atomically). When any package cannot be
// written (a file in its place, files posenc did not generate), none is,
// and the error names each refused package with its own cause. Packages a
// killed earlier run had committed but not yet moved are moved into place
// first, and reported on stderr. It returns the number written.
func GenerateAll(specs []*spec.Spec, out string, force bool) (int, error) {
	pkgs := make([]gen.Package, len(specs))
	for i, s := range specs {
		files, err := gen.Generate(s)
		if err != nil {
			return 0, err
		}
		pkgs[i] = gen.Package{Name: s.Name, Files: files}
	}
	recovered, err := gen.WritePackages(out, pkgs, force)
	if len(recovered) > 0 {
		fmt.Fprintf(os.Stderr, "posenc: finished the write of a killed earlier run first: %d package(s) moved into %s: %s\n",
			len(recovered), out, strings.Join(recovered, ", "))
	}
	var refused *gen.RefusedError
	switch {
	case err == nil:
		return len(specs), nil
	case errors.As(err, &refused) && len(specs) == 1:
		return 0, refused.Errs[0]
	case errors.As(err, &refused):
		summary := fmt.Errorf("%d of %d packages cannot be written into %s: %s (nothing written)",
			len(refused.Names), len(specs), out, strings.Join(refused.Names, ", "))
		return 0, errors.Join(append([]error{summary}, refused.Errs...)...)
	}
	var ce *gen.CommitError
	if errors.As(err, &ce) {
		return len(ce.Written), err
	}
	return 0, err
}
