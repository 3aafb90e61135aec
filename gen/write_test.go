package gen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/internal/emit"
)

func pkgFiles(version string) []emit.File {
	h := emit.Header("zoo/x.yaml") + "\n"
	return []emit.File{
		{Name: "x.go", Data: []byte(h + "package x // " + version + "\n")},
		{Name: "x_" + version + ".go", Data: []byte(h + "package x\n")},
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

func TestWritePackageReplacesWholeDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "x")
	if err := WritePackage(dir, pkgFiles("v1"), false); err != nil {
		t.Fatal(err)
	}
	if err := WritePackage(dir, pkgFiles("v2"), false); err != nil {
		t.Fatal(err)
	}
	got := readDir(t, dir)
	if len(got) != 2 || !strings.Contains(got["x.go"], "v2") || got["x_v2.go"] == "" {
		t.Fatalf("after rewrite: %v", got)
	}
	// No temporary directory is left beside the package.
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Fatalf("leftovers beside the package: %v", ents)
	}
}

func TestWritePackageRefusesForeignFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	if err := WritePackage(dir, pkgFiles("v1"), false); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "handwritten.go")
	if err := os.WriteFile(mine, []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WritePackage(dir, pkgFiles("v2"), false)
	if !errors.Is(err, ErrForeignFiles) || !strings.Contains(err.Error(), "handwritten.go") {
		t.Fatalf("want ErrForeignFiles naming handwritten.go, got %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatal("the refused write touched the directory:", err)
	}
	if err := WritePackage(dir, pkgFiles("v2"), true); err != nil {
		t.Fatal("-force:", err)
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Fatal("forced write kept a file it does not generate")
	}
}

// A write that fails part-way leaves the previous package exactly as it was.
func TestWritePackageFailureKeepsOldPackage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "x")
	if err := WritePackage(dir, pkgFiles("v1"), false); err != nil {
		t.Fatal(err)
	}
	before := readDir(t, dir)
	bad := append(pkgFiles("v2"), emit.File{Name: "../escape.go", Data: []byte("x")})
	if err := WritePackage(dir, bad, false); err == nil {
		t.Fatal("a file name with a path separator was accepted")
	}
	after := readDir(t, dir)
	if len(after) != len(before) || after["x.go"] != before["x.go"] {
		t.Fatalf("old package changed: %v -> %v", before, after)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 1 {
		t.Fatalf("leftovers beside the package: %v", ents)
	}
}
