//go:build tools

// Package main pins the posenc generator, so `go generate` runs the version
// go.mod requires.
package main

import _ "github.com/posenc/posenc/cmd/posenc"
