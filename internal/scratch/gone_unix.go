//go:build unix

package scratch

import (
	"errors"
	"syscall"
)

// processGone reports whether no process with id pid exists: kill(pid, 0)
// fails with ESRCH. A process of another user (EPERM) still exists.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
