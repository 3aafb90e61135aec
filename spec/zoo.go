package spec

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// zooFS holds the real-model specs; each file is named after its spec.
//
//go:embed zoo/*.yaml
var zooFS embed.FS

// ZooNames returns the names of the embedded zoo specs, sorted.
func ZooNames() []string {
	entries, err := fs.ReadDir(zooFS, "zoo")
	if err != nil {
		// The directory is embedded at build time; it is always readable.
		panic(fmt.Sprintf("posenc/spec: reading embedded zoo: %v", err))
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// ZooSpec parses the embedded zoo spec called name. Its File is
// "zoo/<name>.yaml".
func ZooSpec(name string) (*Spec, error) {
	file := "zoo/" + name + ".yaml"
	data, err := zooFS.ReadFile(file)
	if err != nil || strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("spec: no zoo spec %q; the zoo has %s", name, strings.Join(ZooNames(), ", "))
	}
	s, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	if s.Name != name {
		return nil, &Error{File: file, Field: "name", Msg: fmt.Sprintf("zoo file %s holds spec %q; names and files must match", file, s.Name)}
	}
	return s, nil
}

// Zoo parses every embedded zoo spec and returns them sorted by name. Each
// call returns fresh Specs that the caller may modify.
func Zoo() ([]*Spec, error) {
	var out []*Spec
	for _, n := range ZooNames() {
		s, err := ZooSpec(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
