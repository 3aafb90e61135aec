package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/posenc/posenc/importer"
)

func runImportHF(args []string, stdout, stderr io.Writer) error {
	return runImport("import-hf", args, stdout, func(name, path string) ([]byte, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return importer.FromHF(name, data)
	})
}

func runImportGGUF(args []string, stdout, stderr io.Writer) error {
	return runImport("import-gguf", args, stdout, func(name, path string) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return importer.FromGGUF(name, f)
	})
}

// runImport is the shared shape of the import commands: one input file,
// a package name (default: derived from the file's directory or name), and
// the spec written to -o (atomically) or to stdout.
func runImport(cmd string, args []string, stdout io.Writer, convert func(name, path string) ([]byte, error)) error {
	fs := newFlags(cmd, stdout)
	out := fs.String("o", "", "write the spec to this file instead of stdout")
	name := fs.String("name", "", "package name of the spec (default: from the input's directory or file name)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: %s takes one input file", errUsage, cmd)
	}
	path := fs.Arg(0)
	n := *name
	if n == "" {
		base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if base == "config" { // a checkpoint directory's config.json: use the directory
			abs, _ := filepath.Abs(path)
			base = filepath.Base(filepath.Dir(abs))
		}
		n = importer.PackageName(base)
	}
	yaml, err := convert(n, path)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(yaml)
		return err
	}
	return writeFileAtomic(*out, yaml)
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, so path never holds a partial spec.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
