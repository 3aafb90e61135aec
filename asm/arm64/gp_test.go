package arm64

import (
	"strings"
	"testing"
)

// TestLogicImmW checks that AndImmW and OrrImmW accept the 32-bit logical
// immediates made of one (possibly wrapping) run of ones, print them in Go
// syntax, and refuse 0, all ones and values of several runs.
func TestLogicImmW(t *testing.T) {
	for _, c := range []struct {
		imm  uint32
		want string // "" when refused
	}{
		{0xffff0000, "ANDW $0xffff0000, R7, R8"},
		{0x00400000, "ANDW $0x400000, R7, R8"},
		{0x80000001, "ANDW $0x80000001, R7, R8"},
		{0x7fffffff, "ANDW $0x7fffffff, R7, R8"},
		{0, ""}, {0xffffffff, ""}, {0x00ff00ff, ""}, {0x80400000, ""},
	} {
		e := NewEmitter()
		e.Text("f", 0)
		e.AndImmW(R8, R7, c.imm)
		e.End()
		b, err := e.Bytes()
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%#x: accepted:\n%s", c.imm, b)
		case c.want != "" && (err != nil || !strings.Contains(string(b), "\t"+c.want+"\n")):
			t.Errorf("%#x: %v, want %q in\n%s", c.imm, err, c.want, b)
		}
	}
	e := NewEmitter()
	e.Text("f", 0)
	e.OrrImmW(R7, R7, 0x00400000)
	e.End()
	if b, err := e.Bytes(); err != nil || !strings.Contains(string(b), "\tORRW $0x400000, R7, R7\n") {
		t.Errorf("ORRW: %v\n%s", err, b)
	}
}
