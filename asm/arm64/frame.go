package arm64

import "github.com/posenc/posenc/asm/abi"

// TextFor opens the TEXT block of the function name implementing kernel k,
// with k's argument size from its ABI0 frame (abi.Kernel.Frame).
func (e *Emitter) TextFor(name string, k abi.Kernel) { e.Text(name, k.Frame().Size) }

// Arg returns the operand of the frame slot called slot ("q_base",
// "idx_len", "sign") of kernel k, at its offset in k's ABI0 frame. An
// unknown slot is recorded as the emitter's error.
func (e *Emitter) Arg(k abi.Kernel, slot string) Arg {
	s, ok := k.Frame().Lookup(slot)
	if !ok {
		e.errorf("kernel %s has no argument slot %q", k.Field, slot)
	}
	return Arg{Name: slot, Off: s.Off}
}
