package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// copyTree copies the files git knows in root (tracked, and untracked ones
// not ignored: the working tree as `go test` sees it) into dst.
func copyTree(root, dst string) error {
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing %s's files with git: %w", root, err)
	}
	n := 0
	for _, name := range bytes.Split(out, []byte{0}) {
		if len(name) == 0 {
			continue
		}
		rel := filepath.FromSlash(string(name))
		switch err := copyFile(filepath.Join(root, rel), filepath.Join(dst, rel)); {
		case os.IsNotExist(err):
			continue // deleted in the working tree, not yet in the index
		case err != nil:
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: git lists no files", root)
	}
	return nil
}

// copyFile copies one regular file, keeping its permission bits; a
// symbolic link or other special file is skipped.
func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
