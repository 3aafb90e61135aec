package main

import (
	"fmt"
	"io"
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
	if *out == "" {
		// An empty directory would put the packages into the current folder.
		return fmt.Errorf("%w: -o is empty: name the output directory (default generated)", errUsage)
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

// plural formats n with word, adding an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
