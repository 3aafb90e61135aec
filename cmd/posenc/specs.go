package main

import (
	"fmt"
	"os"

	"github.com/posenc/posenc/spec"
)

// loadSpecs resolves the command line's specs: each -zoo NAME from the
// embedded zoo, each argument as a YAML file path (or, when no such file
// exists and the argument is a zoo name, that zoo spec). With neither, the
// whole zoo. Names must be unique: they become package directories.
func loadSpecs(zoo []string, args []string) ([]*spec.Spec, error) {
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
		ss, err := loadFile(a)
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

// loadOne loads a spec file, or a zoo spec by name when no such file exists.
func loadOne(arg string) (*spec.Spec, error) {
	if _, err := os.Stat(arg); err != nil {
		if s, zerr := spec.ZooSpec(arg); zerr == nil {
			return s, nil
		}
	}
	return spec.Load(arg)
}

// loadFile loads every spec of a file (several YAML documents, as
// import-hf writes for Gemma 3, give several), or a zoo spec by name when
// no such file exists.
func loadFile(arg string) ([]*spec.Spec, error) {
	if _, err := os.Stat(arg); err != nil {
		if s, zerr := spec.ZooSpec(arg); zerr == nil {
			return []*spec.Spec{s}, nil
		}
	}
	return spec.LoadAll(arg)
}
