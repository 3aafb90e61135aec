package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/posenc/posenc/importer"
	"github.com/posenc/posenc/spec"
)

// runImportHF writes every spec importer.FromHFSpecs returns: to stdout
// (several as YAML documents separated by "---", which posenc gen, verify,
// explain and plot read), to -o FILE (one spec), or into -o DIR as
// DIR/<name>.yaml each (DIR ends in a slash or is an existing directory).
func runImportHF(args []string, stdout, stderr io.Writer) error {
	return runImport("import-hf", args, stdout, func(name, path string) ([]importer.Spec, error) {
		data, err := spec.ReadInput(path) // refuses a file over spec.MaxInputBytes
		if err != nil {
			return nil, err
		}
		return importer.FromHFSpecs(name, data)
	})
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
	return runImport("import-gguf", args, stdout, func(name, path string) ([]importer.Spec, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		// The importer reads at most the header (64 MiB); name the file in
		// errors that are not an importer.Error (runImport names those).
		y, err := importer.FromGGUF(name, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return []importer.Spec{{Name: name, YAML: y}}, nil
	})
}

// runImport is the shared shape of the import commands: one input file,
// a package name (default: derived from the file's directory or name,
// checked before the input is read), and the specs written by writeSpecs.
// Errors of the importer name the input file as given.
func runImport(cmd string, args []string, stdout io.Writer, convert func(name, path string) ([]importer.Spec, error)) error {
	fs := newFlags(cmd, stdout)
	out := fs.String("o", "", "write the spec to this file instead of stdout; a directory (ending in / or existing) gets NAME.yaml per spec")
	name := fs.String("name", "", "package name of the spec, or prefix of several (default: from the input's directory or file name)")
	force := fs.Bool("force", false, "overwrite existing spec files")
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
	if _, err := os.Stat(path); err != nil {
		return err
	}
	n := importName(*name, path)
	if msg := badSpecName(n); msg != "" {
		if *name != "" {
			return fmt.Errorf("%w: -name: %s", errUsage, msg)
		}
		return fmt.Errorf("%w: %s: the spec name %q derived from the input's path is not usable: %s; choose a name with -name", errUsage, path, n, strings.TrimSuffix(msg, "; choose another"))
	}
	specs, err := convert(n, path)
	if err != nil {
		var ie *importer.Error
		if errors.As(err, &ie) {
			named := *ie
			named.Source = path
			return &named
		}
		return err
	}
	return writeSpecs(*out, path, specs, *force, stdout)
}

// badSpecName returns why name cannot be a spec's name (spec.Parse's
// message), or "" when it can.
func badSpecName(name string) string {
	_, err := spec.Parse("", []byte("name: "+strconv.Quote(name)+"\nencoding: learned\nd_model: 8\nmax_len: 8\n"))
	var se *spec.Error
	if errors.As(err, &se) && se.Field == "name" {
		return se.Msg
	}
	return ""
}

// writeSpecs writes specs to stdout (out empty: several as YAML documents
// separated by "---"), into the directory out as out/<name>.yaml each when
// out ends in a path separator or is an existing directory, or else to the
// file out (one spec only). No file is written unless every target passes:
// none may be the input, and none may exist unless force.
func writeSpecs(out, in string, specs []importer.Spec, force bool, stdout io.Writer) error {
	if out == "" {
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
	st, err := os.Stat(out)
	isDir := err == nil && st.IsDir() || os.IsNotExist(err) && (strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)))
	var paths []string
	switch {
	case isDir:
		for _, s := range specs {
			paths = append(paths, filepath.Join(out, s.Name+".yaml"))
		}
	case len(specs) > 1:
		return fmt.Errorf("%w: %s needs %d specs (%s): -o must name a directory (an existing one, or a path ending in /)", errUsage, in, len(specs), strings.Join(names, ", "))
	default:
		paths = []string{out}
	}
	for _, p := range paths {
		if err := notInput(p, in); err != nil {
			return err
		}
		if _, err := os.Lstat(p); err == nil && !force {
			return fmt.Errorf("%s exists: refusing to overwrite it (use -force)", p)
		}
	}
	if isDir {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	for i, s := range specs {
		if err := writeFileAtomic(paths[i], s.YAML); err != nil {
			return err
		}
	}
	return nil
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
// it into place, so path never holds a partial spec. The file is created
// with mode 0644 less the umask, as os.WriteFile would (os.CreateTemp's
// 0600 would hide the spec from the group and others).
func writeFileAtomic(path string, data []byte) error {
	var tmp *os.File
	for try := 0; ; try++ {
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			tmp = f
			break
		}
		if !os.IsExist(err) || try == 100 {
			return err
		}
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
