//go:build !unix

package protocol

import "os"

// Every line on stdout must be a protocol message: what the library prints through os.Stdout goes
// to stderr (file descriptor 1 itself stays: this platform has no dup2).
func init() {
	out = os.Stdout
	os.Stdout = os.Stderr
}
