package proc

import (
	"sync"
	"time"
)

// Health checks (keepalived's track_script): each check is a shell
// command run every interval by its own goroutine; one that exits
// non-zero, or runs longer than the interval, has failed. What a failing
// check is worth (the priority it costs) is the caller's business.

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

// CheckResult is one run of one check.
type CheckResult struct {
	Index  int // in the commands given to NewChecker
	OK     bool
	At     time.Time // when it finished
	Detail string    // how it failed: "exit status 1: LAST LINE", "timed out after 1s"
}

// RunCheck runs command once through the shell runner, bounded by
// timeout, and says whether it passed and, if not, how it failed.
func RunCheck(command string, timeout time.Duration, env []string) (bool, string) {
	res := Shell{Command: command, Env: env, Timeout: timeout}.Run()
	if res.TimedOut {
		return false, "timed out after " + timeout.String()
	}
	if res.Err != nil {
		d := DescribeExit(res.State, res.Err)
		if res.Last != "" {
			d += ": " + res.Last
		}
		return false, d
	}
	return true, ""
}

// Checker runs every check on its own goroutine, every interval, each
// run bounded by the interval.
//
// Concurrency: First, Start and Stop are called by one goroutine, in
// that order, each once; the report callback is called from the checks'
// goroutines (see Start).
type Checker struct {
	commands []string
	interval time.Duration
	env      []string
	quit     chan struct{}
	wg       sync.WaitGroup
}

// NewChecker returns a checker of commands, run with env.
func NewChecker(commands []string, interval time.Duration, env []string) *Checker {
	return &Checker{commands: commands, interval: interval, env: env, quit: make(chan struct{})}
}

// First runs every check once, all at the same time, and returns their
// results in the order of the commands: a node starts with the priority
// its checks give it. Call it before Start.
func (c *Checker) First() []CheckResult {
	res := make([]CheckResult, len(c.commands))
	var wg sync.WaitGroup
	for i := range c.commands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = c.runOne(i)
		}()
	}
	wg.Wait()
	return res
}

func (c *Checker) runOne(i int) CheckResult {
	ok, detail := RunCheck(c.commands[i], c.interval, c.env)
	return CheckResult{Index: i, OK: ok, At: time.Now(), Detail: detail}
}

// Start runs every check every interval until Stop. report is called
// with each result from that check's goroutine: different checks report
// concurrently, one check never concurrently with itself. A run that
// ends after Stop has begun is not reported, but a report under way may
// still run while Stop waits: report may block (that check waits), but
// must not wait for Stop.
func (c *Checker) Start(report func(CheckResult)) {
	for i := range c.commands {
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
				r := c.runOne(i)
				select {
				case <-c.quit:
					return
				default:
				}
				report(r)
			}
		}()
	}
}

// Stop ends the checks and waits for their goroutines (a check that
// runs is waited for, at most its interval). Call it once.
func (c *Checker) Stop() {
	close(c.quit)
	c.wg.Wait()
}
