package agent

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Health checks (keepalived's track_script): each check is a shell command
// run every CheckInterval by its own goroutine; one that exits non-zero,
// or runs longer than the interval, has failed. The loop lowers the
// node's priority by CheckWeight for each failing check (effectivePriority)
// and tells the election machine (EvSetPriority) and the other members
// (memberlist metadata).

// CheckStatus is one check's part of /status.
type CheckStatus struct {
	Command string `json:"command"`
	OK      bool   `json:"ok"`
	Weight  int    `json:"weight"`
	// Last is when it last finished, RFC 3339 with milliseconds.
	Last string `json:"last,omitempty"`
	// Detail is how it failed: its exit status and the last line of its
	// output.
	Detail string `json:"detail,omitempty"`
}

type checkResult struct {
	index  int
	ok     bool
	at     time.Time
	detail string
}

// runCheck runs command once, bounded by timeout.
func runCheck(command string, timeout time.Duration, env []string) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		return false, "timed out after " + timeout.String()
	}
	if err != nil {
		d := describeExit(cmd.ProcessState, err)
		if last := lastLine(out.String()); last != "" {
			d += ": " + last
		}
		return false, d
	}
	return true, ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// checker runs every check on its own goroutine and hands results to the
// loop through report.
type checker struct {
	commands []string
	interval time.Duration
	env      []string
	report   func(checkResult)
	quit     chan struct{}
	wg       sync.WaitGroup
}

// first runs every check once, at the same time, and returns the results:
// an agent starts with the priority its checks give it.
func (c *checker) first() []checkResult {
	res := make([]checkResult, len(c.commands))
	var wg sync.WaitGroup
	for i, command := range c.commands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, detail := runCheck(command, c.interval, c.env)
			res[i] = checkResult{index: i, ok: ok, at: time.Now(), detail: detail}
		}()
	}
	wg.Wait()
	return res
}

// start runs every check every interval until stop.
func (c *checker) start() {
	for i, command := range c.commands {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			tick := time.NewTicker(c.interval)
			defer tick.Stop()
			for {
				select {
				case <-c.quit:
					return
				case <-tick.C:
				}
				ok, detail := runCheck(command, c.interval, c.env)
				select {
				case <-c.quit:
					return
				default:
				}
				c.report(checkResult{index: i, ok: ok, at: time.Now(), detail: detail})
			}
		}()
	}
}

func (c *checker) stop() {
	close(c.quit)
	c.wg.Wait()
}
