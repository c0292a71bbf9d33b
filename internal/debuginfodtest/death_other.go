//go:build !linux

package debuginfodtest

import "os/exec"

// dieWithParent needs Linux's parent-death signal; elsewhere the server
// is only stopped by the test's cleanup.
func dieWithParent(*exec.Cmd) {}
