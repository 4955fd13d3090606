//go:build unix

package protocol

import (
	"os"
	"syscall"
)

// Every line on stdout must be a protocol message: the protocol keeps its own copy of file
// descriptor 1, and fd 1 (os.Stdout, and what a C library writes) goes to stderr.
func init() {
	kept, err := syscall.Dup(1)
	if err != nil {
		os.Stdout = os.Stderr
		return
	}
	out = os.NewFile(uintptr(kept), "protocol")
	if dup2(2, 1) != nil {
		out = os.Stdout
	}
	os.Stdout = os.Stderr
}
