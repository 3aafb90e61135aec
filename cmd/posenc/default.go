package main

import (
	"fmt"
	"io"

	"github.com/posenc/posenc/spec"
)

// runDefault is posenc with no arguments: generate the embedded zoo into
// generated/ and verify it, printing the table and a summary.
func runDefault(stdout, stderr io.Writer) error {
	specs, err := spec.Zoo()
	if err != nil {
		return err
	}
	n, err := generateAll(specs, "generated", false)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "posenc: wrote %d zoo packages into generated/\n", n)
	rows, err := verifySpecs(specs, nil, stderr)
	if err != nil {
		return err
	}
	printRows(stdout, rows)
	bad := failed(rows)
	fmt.Fprintf(stdout, "posenc: %d specs, %d variants verified, %d failed\n", len(specs), len(rows)-bad, bad)
	if bad > 0 {
		return fmt.Errorf("%d variants failed or did not run", bad)
	}
	return nil
}
