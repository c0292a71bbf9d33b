package debuginfodtest

import (
	"os/exec"
	"syscall"
)

// dieWithParent kills the server when the test binary dies, so that a
// crashed test leaves no debuginfod running.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
