// Package slurmtest starts a one-node Slurm cluster for tests: Debian's
// munged, slurmctld and slurmd, each in the foreground with its key,
// configuration, state, spool, logs and pid files inside the test's
// temporary directory, on free 127.0.0.1 ports, with no accounting and
// no cgroup plugin (proctrack/linuxproc, task/none), so that it runs in
// a container as well as on a machine. The daemons run as root, as Slurm
// needs to start jobs; a test that is not root skips. Everything is
// stopped when the test ends: jobs cancelled, then the daemons.
package slurmtest

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"bloop/internal/testenv"
)

// Node is the one node's name; slurmd is told it is this node.
const Node = "localhost"

// Cluster is a running cluster.
type Cluster struct {
	Dir  string // configuration, state, spool and logs
	Conf string // slurm.conf: $SLURM_CONF of every command
	t    testing.TB
	bin  map[string]string
	// procs are the daemons, stopped in reverse order.
	procs []*proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// Tools are the commands a cluster needs, by the Debian package that
// has them.
var tools = map[string]string{
	"munged": "munge", "slurmctld": "slurm-wlm", "slurmd": "slurm-wlm",
	"sbatch": "slurm-wlm", "squeue": "slurm-wlm", "scontrol": "slurm-wlm", "scancel": "slurm-wlm", "sinfo": "slurm-wlm",
}

// config is slurm.conf. SlurmUser root: the controller runs as the test
// does. ReturnToService=2: the node comes back by itself if it
// registered late. MinJobAge keeps finished jobs visible to scontrol
// (there is no accounting to ask) for the rest of the test.
const config = `ClusterName=bloop
SlurmctldHost={{node}}
SlurmctldPort={{ctldport}}
SlurmdPort={{dport}}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={{dir}}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={{dir}}/state
SlurmdSpoolDir={{dir}}/spool
SlurmctldPidFile={{dir}}/slurmctld.pid
SlurmdPidFile={{dir}}/slurmd.pid
SlurmctldLogFile={{dir}}/slurmctld.log
SlurmdLogFile={{dir}}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=3600
SlurmctldTimeout=60
SlurmdTimeout=120
NodeName={{node}} CPUs={{cpus}} State=UNKNOWN
PartitionName=test Nodes={{node}} Default=YES MaxTime=INFINITE State=UP
`

// Start starts a cluster for the test and stops it when the test ends.
// Without Slurm or munge installed the test skips, or fails under CI;
// not root, it skips.
func Start(t testing.TB) *Cluster {
	t.Helper()
	testenv.NeedLinux(t)
	c := &Cluster{t: t, bin: map[string]string{}}
	for tool, pkg := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			if p, err = exec.LookPath("/usr/sbin/" + tool); err != nil {
				testenv.Absent(t, "%s not installed (Debian package %s)", tool, pkg)
			}
		}
		c.bin[tool] = p
	}
	if os.Geteuid() != 0 {
		t.Skip("slurmd starts jobs as their user: the test must be root")
	}
	// A directory of our own under /tmp, not t.TempDir(): munged's socket
	// path must be short (108 bytes), and slurmstepd may still hold files
	// in it for a moment after the cluster stops.
	dir, err := os.MkdirTemp("", "slurmtest")
	if err != nil {
		t.Fatal(err)
	}
	c.Dir = dir
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		} else {
			t.Logf("slurm cluster's files left in %s", dir)
		}
	})
	// The directories are reached by the jobs' processes and munged's
	// clients: readable by all, as /var/spool's are.
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(c.stop)
	c.startMunge()
	var lastErr error
	for range 3 {
		if lastErr = c.startSlurm(); lastErr == nil {
			return c
		}
		c.stopDaemons("slurmd", "slurmctld")
	}
	t.Fatalf("slurm did not start: %v", lastErr)
	return nil
}

// startMunge makes a key and starts munged on a socket of its own.
func (c *Cluster) startMunge() {
	m := filepath.Join(c.Dir, "munge")
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(m, "munge.key"), key, 0o400); err != nil {
		c.t.Fatal(err)
	}
	sock := filepath.Join(m, "munge.socket")
	// --force: munged otherwise refuses a key or socket below a directory
	// others can write to, such as /tmp.
	c.spawn("munged", c.bin["munged"], "--foreground", "--force", "--socket="+sock,
		"--key-file="+filepath.Join(m, "munge.key"), "--pid-file="+filepath.Join(m, "munged.pid"),
		"--seed-file="+filepath.Join(m, "munged.seed"), "--log-file="+filepath.Join(m, "munged.log"),
		"--num-threads=4")
	c.waitFor("munged's socket", 30*time.Second, func() error {
		_, err := os.Stat(sock)
		return err
	})
}

// startSlurm writes slurm.conf on two free ports and starts the
// controller and the node's daemon, then waits for the node to be idle.
func (c *Cluster) startSlurm() error {
	ctld, err1 := testenv.FreePort()
	d, err2 := testenv.FreePort()
	if err1 != nil || err2 != nil || ctld == d {
		return fmt.Errorf("no free port: %v %v", err1, err2)
	}
	conf := strings.NewReplacer("{{dir}}", c.Dir, "{{node}}", Node, "{{ctldport}}", fmt.Sprint(ctld),
		"{{dport}}", fmt.Sprint(d), "{{cpus}}", fmt.Sprint(runtime.NumCPU())).Replace(config)
	c.Conf = filepath.Join(c.Dir, "slurm.conf")
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		return err
	}
	// -i: no state from an earlier run; -D: in the foreground.
	c.spawn("slurmctld", c.bin["slurmctld"], "-D", "-i")
	c.spawn("slurmd", c.bin["slurmd"], "-D", "-N", Node)
	// Generous: on a loaded machine the daemons take their time.
	deadline := time.Now().Add(120 * time.Second)
	var state string
	for time.Now().Before(deadline) {
		for _, p := range c.procs {
			select {
			case <-p.done:
				return fmt.Errorf("%s exited: %s", p.name, c.logTail(p.name))
			default:
			}
		}
		out, err := c.Command("sinfo", "-h", "-N", "-o", "%T").Output()
		state = strings.TrimSpace(string(out))
		if err == nil && state == "idle" {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("node %s is %q after 120 s: %s", Node, state, c.logTail("slurmd"))
}

// spawn starts a daemon, its output in DIR/NAME.out.
func (c *Cluster) spawn(name, bin string, args ...string) {
	out, err := os.Create(filepath.Join(c.Dir, name+".out"))
	if err != nil {
		c.t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = c.Env()
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a Ctrl-C of the test does not reach it
	// before the cleanup does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	c.procs = append(c.procs, p)
}

// Env is the environment of the cluster's commands: this process's with
// SLURM_CONF naming the cluster's configuration.
func (c *Cluster) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") {
			env = append(env, kv)
		}
	}
	if c.Conf != "" {
		env = append(env, "SLURM_CONF="+c.Conf)
	}
	return env
}

// Command is a Slurm command (sbatch, scontrol, ...) of this cluster.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	bin := c.bin[name]
	if bin == "" {
		bin = name
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = c.Env()
	return cmd
}

// Run runs a Slurm command and returns its standard output; a failure
// fails the test.
func (c *Cluster) Run(name string, args ...string) string {
	c.t.Helper()
	cmd := c.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// waitFor polls ok until it returns nil, failing the test at timeout.
func (c *Cluster) waitFor(what string, timeout time.Duration, ok func() error) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := ok()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waited %v for %s: %v", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logTail is the last lines of a daemon's output and log.
func (c *Cluster) logTail(name string) string {
	var b strings.Builder
	for _, f := range []string{name + ".out", name + ".log"} {
		data, _ := os.ReadFile(filepath.Join(c.Dir, f))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		fmt.Fprintf(&b, "\n%s:\n%s", f, strings.Join(lines, "\n"))
	}
	return b.String()
}

// stop cancels every job, waits (bounded) for their processes to end,
// and stops the daemons, the last started first.
func (c *Cluster) stop() {
	if c.Conf != "" && len(c.procs) > 1 {
		c.Command("scancel", "--full", "--user=root").Run()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			out, err := c.Command("squeue", "-h", "-t", "RUNNING,COMPLETING", "-o", "%i").Output()
			if err != nil || strings.TrimSpace(string(out)) == "" {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	c.stopDaemons("slurmd", "slurmctld", "munged")
}

// stopDaemons ends the named daemons: SIGTERM, then SIGKILL after 20 s.
func (c *Cluster) stopDaemons(names ...string) {
	for _, name := range names {
		for i := len(c.procs) - 1; i >= 0; i-- {
			p := c.procs[i]
			if p.name != name {
				continue
			}
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				p.cmd.Process.Kill()
				<-p.done
			}
			c.procs = append(c.procs[:i], c.procs[i+1:]...)
		}
	}
}

// Submit runs sbatch --parsable with args, env (VAR=value) added to the
// environment the job gets, and returns the job's id.
func (c *Cluster) Submit(env []string, args ...string) string {
	c.t.Helper()
	cmd := c.Command("sbatch", append([]string{"--parsable"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("sbatch %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";") // "id;cluster" on a federation
	return id
}

// Task is one job, or one task of an array, as scontrol shows it.
type Task struct {
	ID       string // the array's index ("3"), a range for its pending rest ("3-4"), or "" for a job of its own
	State    string // JobState: PENDING, RUNNING, COMPLETED, CANCELLED, FAILED...
	Restarts string
	Reason   string
	ExitCode string // status:signal
}

// terminal are the states a job does not leave unless requeued.
var terminal = map[string]bool{"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true,
	"NODE_FAIL": true, "OUT_OF_MEMORY": true, "BOOT_FAIL": true, "DEADLINE": true, "PREEMPTED": true}

// Tasks returns the job's tasks (one for a job that is not an array).
func (c *Cluster) Tasks(id string) []Task {
	c.t.Helper()
	var out []Task
	for line := range strings.SplitSeq(strings.TrimSpace(c.Run("scontrol", "-o", "show", "job", id)), "\n") {
		var tk Task
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "ArrayTaskId":
				tk.ID = v
			case "JobState":
				tk.State = v
			case "Restarts":
				tk.Restarts = v
			case "Reason":
				tk.Reason = v
			case "ExitCode":
				tk.ExitCode = v
			}
		}
		out = append(out, tk)
	}
	return out
}

// Wait polls until every task of the job has ended (a generous timeout:
// a loaded machine is slow, and a hung job fails the test there) and
// returns them.
func (c *Cluster) Wait(id string, timeout time.Duration) []Task {
	c.t.Helper()
	var tasks []Task
	c.waitFor("job "+id, timeout, func() error {
		tasks = c.Tasks(id)
		for _, tk := range tasks {
			if !terminal[tk.State] {
				return fmt.Errorf("task %q is %s (%s)", tk.ID, tk.State, tk.Reason)
			}
		}
		return nil
	})
	return tasks
}

// WaitState polls until task index of array job id is in state.
func (c *Cluster) WaitState(id, index, state string, timeout time.Duration) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("job %s_%s %s", id, index, state), timeout, func() error {
		for _, tk := range c.Tasks(id + "_" + index) {
			if tk.ID == index && tk.State == state {
				return nil
			}
		}
		return fmt.Errorf("not yet: %+v", c.Tasks(id+"_"+index))
	})
}
