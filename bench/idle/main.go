//go:build linux

// Command idle measures what one idle lanleader agent costs its host: the
// resident memory and CPU time of one `lanleader run` process that leads a
// cluster of one, over a window.
//
//	go run ./bench/idle [-duration 60s] [-heartbeat 100ms] [-bin PATH]
//
// Without -bin it builds the agent (go build ./cmd/lanleader, from the
// module root found by walking up from the working directory to go.mod)
// into a temporary directory. It starts
//
//	lanleader run --name idle --node-id 1 --bind 127.0.0.1:0
//	    --transport unicast --http 127.0.0.1:0 --heartbeat HB
//
// with its output in a temporary log file, waits until the log says
// `msg="became leader"` (at most 10 s), then reads /proc/PID/status
// (VmRSS) and /proc/PID/stat (utime + stime) at the start of the window
// and every second until -duration has passed. Unicast with no peers: the
// heartbeat timer still fires and the agent does its per-heartbeat work,
// but sends no packet to anyone.
//
// It prints the RSS (min, median, max, MiB), the CPU time the process used
// during the window (its last utime+stime minus its first, in USER_HZ
// ticks of 10 ms, so the figure has a resolution of 10 ms) and that time as a percentage of one
// core over the window's wall time. Then it sends SIGTERM to the agent,
// waits up to 10 s (then SIGKILL), and reports its exit status, which
// must be 0; otherwise it prints the log's last lines and exits 1.
//
// Ctrl-C (or SIGTERM) stops the agent the same way, removes the temporary
// directory and exits 130. The agent runs in its own process group so that
// Ctrl-C in a terminal reaches only this command, which then stops it.
//
// Linux only (/proc).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/bench/internal/machine"
	"github.com/lanleader/lanleader/bench/internal/procstat"
)

const (
	leadDeadline = 10 * time.Second // from the start to "became leader"
	stopDeadline = 10 * time.Second // from SIGTERM to exit, then SIGKILL
	sampleEvery  = time.Second
)

// errInterrupted: the user asked to stop.
var errInterrupted = errors.New("interrupted")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one line, below
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench/idle [-duration 60s] [-heartbeat 100ms] [-bin PATH]\n\n"+
			"RSS and CPU of one idle lanleader agent (a leader of a cluster of one).\n\n")
		fs.PrintDefaults()
	}
	duration := fs.Duration("duration", 60*time.Second, "measuring window, at least 1s")
	hb := fs.Duration("heartbeat", 100*time.Millisecond, "the agent's --heartbeat")
	bin := fs.String("bin", "", "lanleader binary to measure (default: build ./cmd/lanleader)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fs.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "idle: %v\n", err)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "idle: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *duration < time.Second:
		fmt.Fprintf(stderr, "idle: -duration: %v is shorter than 1s\n", *duration)
		return 2
	case *hb < time.Millisecond:
		fmt.Fprintf(stderr, "idle: -heartbeat: %v is shorter than 1ms\n", *hb)
		return 2
	}

	// Signals are caught from here on; a context carries them to the build.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(interrupted)
			cancel()
		case <-ctx.Done():
		}
	}()

	tmp, err := os.MkdirTemp("", "lanleader-idle-")
	if err != nil {
		fmt.Fprintf(stderr, "idle: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	label := *bin
	if *bin == "" {
		root, err := moduleRoot()
		if err != nil {
			fmt.Fprintf(stderr, "idle: %v\n", err)
			return 1
		}
		*bin = filepath.Join(tmp, "lanleader")
		label = "lanleader (built from " + root + ")"
		fmt.Fprintf(stderr, "idle: building %s from %s\n", *bin, root)
		build := exec.CommandContext(ctx, "go", "build", "-o", *bin, "./cmd/lanleader")
		build.Dir = root
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "idle: interrupted")
				return 130
			}
			fmt.Fprintf(stderr, "idle: go build: %v\n", err)
			return 1
		}
	} else if abs, err := filepath.Abs(*bin); err == nil {
		*bin = abs
	}

	res, err := measure(*bin, *hb, *duration, tmp, interrupted, stderr)
	if errors.Is(err, errInterrupted) {
		fmt.Fprintln(stderr, "idle: interrupted")
		return 130
	}
	if err != nil {
		fmt.Fprintf(stderr, "idle: %v\n", err)
		if res.log != "" {
			fmt.Fprintf(stderr, "idle: last lines of the agent's log:\n%s", res.log)
		}
		return 1
	}
	report(stdout, label, *hb, res)
	if res.exitCode != 0 {
		fmt.Fprintf(stderr, "idle: the agent exited with %s after SIGTERM, want 0; last lines of its log:\n%s", res.exitDesc, res.log)
		return 1
	}
	return 0
}

// result of one measurement.
type result struct {
	pid      int
	ledAfter time.Duration
	wall     time.Duration
	rssKiB   []int64
	cpu      time.Duration
	exitCode int
	exitDesc string
	stopTook time.Duration
	log      string // the log's last lines, when something went wrong
}

// measure starts the agent, samples it, and stops it. The agent is always
// stopped (by pid) before measure returns.
func measure(bin string, hb, duration time.Duration, tmp string, interrupted <-chan struct{}, stderr io.Writer) (res result, err error) {
	logPath := filepath.Join(tmp, "agent.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "run", "--name", "idle", "--node-id", "1", "--bind", "127.0.0.1:0",
		"--transport", "unicast", "--http", "127.0.0.1:0", "--heartbeat", hb.String())
	cmd.Stdout, cmd.Stderr = logf, logf
	// Own process group: a terminal's Ctrl-C reaches only us. Pdeathsig:
	// should this command die without stopping it, the agent dies too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Pdeathsig is tied to the thread that forks.
	runtime.LockOSThread()
	err = cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return res, fmt.Errorf("start %s: %w", bin, err)
	}
	res.pid = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	// stop sends SIGTERM, waits, then SIGKILL; it fills the exit fields.
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		t := time.Now()
		// Process.Signal and Kill go through a pidfd on Linux: they cannot
		// reach another process that reused the pid after the agent exited.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopDeadline):
			fmt.Fprintf(stderr, "idle: agent pid %d still running %v after SIGTERM: SIGKILL\n", res.pid, stopDeadline)
			cmd.Process.Kill()
			<-exited
		}
		res.stopTook = time.Since(t)
		res.exitCode = cmd.ProcessState.ExitCode()
		res.exitDesc = cmd.ProcessState.String()
		if res.exitCode != 0 {
			res.log = tail(logPath, 20)
		}
	}
	defer func() {
		stop()
		if err != nil {
			res.log = tail(logPath, 20)
		}
	}()

	// Wait for leadership.
	t0 := time.Now()
	for {
		b, _ := os.ReadFile(logPath)
		if bytes.Contains(b, []byte(`msg="became leader"`)) {
			break
		}
		select {
		case <-interrupted:
			return res, errInterrupted
		case <-exited:
			return res, fmt.Errorf("the agent exited before it led: %s", cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(t0) > leadDeadline {
			return res, fmt.Errorf("the agent did not log msg=\"became leader\" within %v", leadDeadline)
		}
	}
	res.ledAfter = time.Since(t0)
	sample := func() (rssKiB int64, cpu time.Duration, err error) {
		rss, err := procstat.RSS(res.pid)
		if err == nil {
			cpu, err = procstat.CPU(res.pid)
		}
		return int64(rss >> 10), cpu, err
	}
	rss, c0, err := sample()
	if err != nil {
		return res, err
	}
	w0 := time.Now()
	res.rssKiB = append(res.rssKiB, rss)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	var c1 time.Duration
	for time.Since(w0) < duration-sampleEvery/2 {
		select {
		case <-interrupted:
			return res, errInterrupted
		case <-exited:
			return res, fmt.Errorf("the agent exited during the window: %s", cmd.ProcessState)
		case <-tick.C:
		}
		if rss, c1, err = sample(); err != nil {
			return res, err
		}
		res.rssKiB = append(res.rssKiB, rss)
	}
	res.wall = time.Since(w0)
	res.cpu = c1 - c0
	stop()
	return res, nil
}

func report(w io.Writer, bin string, hb time.Duration, r result) {
	s := slices.Clone(r.rssKiB)
	slices.Sort(s)
	n := len(s)
	med := float64(s[n/2])
	if n%2 == 0 {
		med = float64(s[n/2-1]+s[n/2]) / 2
	}
	mib := func(kib float64) float64 { return kib / 1024 }
	cpu := r.cpu.Seconds()
	fmt.Fprintf(w, "# %s\n", machine.This().Line())
	fmt.Fprintf(w, "agent    %s run --heartbeat %v --transport unicast (pid %d), leader %v after start\n",
		bin, hb, r.pid, r.ledAfter.Round(time.Millisecond))
	fmt.Fprintf(w, "window   %.1f s wall, %d samples (at the start, then every %v)\n", r.wall.Seconds(), n, sampleEvery)
	fmt.Fprintf(w, "RSS      min %.1f MiB  median %.1f MiB  max %.1f MiB\n", mib(float64(s[0])), mib(med), mib(float64(s[n-1])))
	fmt.Fprintf(w, "CPU      %.2f s user+system = %.3f %% of one core (resolution 10 ms)\n",
		cpu, cpu/r.wall.Seconds()*100)
	fmt.Fprintf(w, "stop     SIGTERM → %s after %v\n", r.exitDesc, r.stopTook.Round(time.Millisecond))
}

// moduleRoot is the nearest directory at or above the working directory
// that holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod in the working directory or above it: run from the lanleader module, or pass -bin")
		}
		dir = up
	}
}

// tail is the last n lines of a file, each ending in a newline.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")\n"
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "  (the log is empty)\n"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString("  " + l + "\n")
	}
	return sb.String()
}
