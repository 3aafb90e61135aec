package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/posenc/posenc/importer"
	"github.com/posenc/posenc/spec"
)

// runImportHF writes every spec importer.FromHFSpecs returns: one spec as
// before (to -o FILE or stdout); several (Gemma 3's local and global
// layers) to -o DIR as DIR/<name>.yaml each, or to stdout as YAML
// documents separated by "---" (which posenc gen and verify read).
func runImportHF(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import-hf", stdout)
	out := fs.String("o", "", "write the spec to this file (several specs: into this directory, as NAME.yaml) instead of stdout")
	name := fs.String("name", "", "package name of the spec, or prefix of several (default: from the input's directory or file name)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: import-hf takes one input file", errUsage)
	}
	path := fs.Arg(0)
	if err := notInput(*out, path); err != nil {
		return err
	}
	data, err := spec.ReadInput(path) // refuses a file over spec.MaxInputBytes
	if err != nil {
		return err
	}
	specs, err := importer.FromHFSpecs(importName(*name, path), data)
	if err != nil {
		return err
	}
	if len(specs) == 1 {
		if *out == "" {
			_, err = stdout.Write(specs[0].YAML)
			return err
		}
		return writeFileAtomic(*out, specs[0].YAML)
	}
	if *out == "" {
		for i, s := range specs {
			if i > 0 {
				if _, err := io.WriteString(stdout, "---\n"); err != nil {
					return err
				}
			}
			if _, err := stdout.Write(s.YAML); err != nil {
				return err
			}
		}
		return nil
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	if st, err := os.Stat(*out); err == nil && !st.IsDir() || err != nil && !strings.HasSuffix(*out, "/") {
		return fmt.Errorf("%w: %s needs %d specs (%s): -o must name a directory (an existing one, or a path ending in /)", errUsage, path, len(specs), strings.Join(names, ", "))
	}
	for _, s := range specs {
		if err := notInput(filepath.Join(*out, s.Name+".yaml"), path); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, s := range specs {
		if err := writeFileAtomic(filepath.Join(*out, s.Name+".yaml"), s.YAML); err != nil {
			return err
		}
	}
	return nil
}

// importName is -name, or a name derived from the input path: its file
// name without extension, or for a checkpoint's config.json its directory.
func importName(flag, path string) string {
	if flag != "" {
		return flag
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if base == "config" { // a checkpoint directory's config.json: use the directory
		abs, _ := filepath.Abs(path)
		base = filepath.Base(filepath.Dir(abs))
	}
	return importer.PackageName(base)
}

func runImportGGUF(args []string, stdout, stderr io.Writer) error {
	return runImport("import-gguf", args, stdout, func(name, path string) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		// The importer reads at most the header (64 MiB); its errors say
		// "GGUF", so name the file.
		y, err := importer.FromGGUF(name, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return y, nil
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
	if err := notInput(*out, path); err != nil {
		return err
	}
	yaml, err := convert(importName(*name, path), path)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(yaml)
		return err
	}
	return writeFileAtomic(*out, yaml)
}

// notInput refuses an output path out (-o) that is the input file in: the
// same file by os.SameFile (a link, another spelling of the path) or, when
// either does not exist yet, the same cleaned absolute path. An empty out
// (stdout) is never the input.
func notInput(out, in string) error {
	if out == "" {
		return nil
	}
	same := false
	so, errOut := os.Stat(out)
	si, errIn := os.Stat(in)
	if errOut == nil && errIn == nil {
		same = os.SameFile(so, si)
	} else {
		ao, err1 := filepath.Abs(out)
		ai, err2 := filepath.Abs(in)
		same = err1 == nil && err2 == nil && ao == ai
	}
	if same {
		return fmt.Errorf("%w: -o %s is the input file %s: refusing to overwrite it", errUsage, out, in)
	}
	return nil
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
