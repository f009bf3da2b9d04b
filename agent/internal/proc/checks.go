package proc

import (
	"strings"
	"sync"
	"time"
)

// Health checks (keepalived's vrrp_script): each check is a shell command
// run every interval by its own goroutine, each run bounded by the
// check's timeout; one that exits non-zero, or runs out of time, has
// failed. Its state (CheckState) changes after rise passes in a row, or
// fall failures in a row. What a failed check is worth (the priority it
// costs, or a fault) is the caller's business.

// CheckSpec is one check's definition.
type CheckSpec struct {
	Name     string
	Command  string
	Interval time.Duration // between the starts of two runs
	Timeout  time.Duration // of one run, at most Interval
	Rise     int           // passes in a row that make a failed check OK, ≥ 1
	Fall     int           // failures in a row that make an OK check failed, ≥ 1
}

// CheckResult is one run of one check.
type CheckResult struct {
	ID     uint64 // the check's, given to Checker.Add
	OK     bool
	At     time.Time // when it finished
	Detail string    // how it failed: "exit status 1: LAST LINE", "timed out after 1s"
}

// CheckState is a check's state under keepalived's rise and fall: OK
// until Fall failures in a row, then failed until Rise passes in a row.
// The first result (Init) decides it at once, as keepalived's first run
// does.
type CheckState struct {
	OK bool
	// Passes and Fails are the passes (while failed) or the failures
	// (while OK) in a row toward a change, 0 right after one.
	Passes, Fails int
}

// Init is the state the first result gives.
func Init(ok bool) CheckState { return CheckState{OK: ok} }

// Record counts one result of a check with rise and fall, and says
// whether its state changed.
func (s *CheckState) Record(ok bool, rise, fall int) bool {
	if ok {
		s.Fails = 0
		if s.OK {
			return false
		}
		s.Passes++
		if s.Passes < rise {
			return false
		}
	} else {
		s.Passes = 0
		if !s.OK {
			return false
		}
		s.Fails++
		if s.Fails < fall {
			return false
		}
	}
	*s = CheckState{OK: ok}
	return true
}

// RunCheck runs command once through the shell runner, bounded by
// timeout, and says whether it passed and, if not, how it failed.
func RunCheck(command string, timeout time.Duration, env []string) (bool, string) {
	res := Shell{Command: command, Env: env, Timeout: timeout}.Run()
	if res.TimedOut {
		return false, timedOut + timeout.String()
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

// timedOut begins the detail of a run that ran out of time.
const timedOut = "timed out after "

// TimedOut says whether detail, of a failed run, is a timeout's.
func TimedOut(detail string) bool { return strings.HasPrefix(detail, timedOut) }

// CheckRunner runs one check once: RunCheck in a Checker, a test's fake
// in tests.
type CheckRunner func(CheckSpec) (ok bool, detail string)

// ShellChecks is the CheckRunner of the shell, with env.
func ShellChecks(env []string) CheckRunner {
	return func(s CheckSpec) (bool, string) { return RunCheck(s.Command, s.Timeout, env) }
}

// Checker runs checks, each on its own goroutine every its interval,
// until it is removed. Checks come and go (Add, Remove) while the others
// run on: a reload keeps the checks it does not change.
//
// Concurrency: Add, Remove and Stop may be called from any goroutine; an
// Add after Stop starts nothing. The report callback is called from the checks' goroutines: different checks
// report concurrently, one check never concurrently with itself. A run
// that ends after its Remove (or Stop) is not reported, but a report under
// way may still run: report may block (that check waits), but must not
// wait for Remove or Stop.
type Checker struct {
	run     CheckRunner
	report  func(CheckResult)
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[uint64]chan struct{} // each check's quit
	stopped bool
}

// NewChecker returns a checker that runs checks with run and reports
// their results to report.
func NewChecker(run CheckRunner, report func(CheckResult)) *Checker {
	return &Checker{run: run, report: report, running: map[uint64]chan struct{}{}}
}

// RunAll runs every check once, all at the same time, and returns their
// results in the order of specs (with ID the index): a node starts with
// the state its checks give it.
func RunAll(run CheckRunner, specs []CheckSpec) []CheckResult {
	res := make([]CheckResult, len(specs))
	var wg sync.WaitGroup
	for i := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = runOne(run, uint64(i), specs[i])
		}()
	}
	wg.Wait()
	return res
}

func runOne(run CheckRunner, id uint64, s CheckSpec) CheckResult {
	ok, detail := run(s)
	return CheckResult{ID: id, OK: ok, At: time.Now(), Detail: detail}
}

// Add starts check id (not running yet): its first run is one interval
// from now.
func (c *Checker) Add(id uint64, s CheckSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	quit := make(chan struct{})
	c.running[id] = quit
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(s.Interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			r := runOne(c.run, id, s)
			select {
			case <-quit:
				return
			default:
			}
			c.report(r)
		}
	}()
}

// Remove ends check id without waiting for a run under way (it ends
// within the check's timeout, unreported); Stop waits for it.
func (c *Checker) Remove(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(id)
}

func (c *Checker) remove(id uint64) {
	if q, ok := c.running[id]; ok {
		close(q)
		delete(c.running, id)
	}
}

// Stop ends every check and waits for all the goroutines, the removed
// ones' too (a run under way is waited for, at most its timeout).
func (c *Checker) Stop() {
	c.mu.Lock()
	c.stopped = true
	for id := range c.running {
		c.remove(id)
	}
	c.mu.Unlock()
	c.wg.Wait()
}
