//go:build linux

// Package procstat reads a process's resource usage from /proc, through
// prometheus/procfs: its CPU time, its resident set and its parent. The
// benchmarks report the agents' cost with it.
package procstat

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/procfs"
)

// stat is /proc/<pid>/stat of a process.
func stat(pid int) (procfs.ProcStat, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcStat{}, err
	}
	s, err := p.Stat()
	if err != nil {
		return procfs.ProcStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return s, nil
}

// CPU is a process's CPU time so far, user and system. /proc counts it in
// USER_HZ ticks (100 a second on every Linux architecture Go supports),
// so its resolution is 10 ms.
func CPU(pid int) (time.Duration, error) {
	s, err := stat(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(s.UTime+s.STime) * time.Second / userHZ, nil
}

// userHZ is the unit of /proc/<pid>/stat's times.
const userHZ = 100

// RSS is a process's resident set, in bytes (VmRSS of /proc/<pid>/status).
func RSS(pid int) (uint64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return st.VmRSS, nil
}

// Parent is a process's parent pid; 0 when the process is gone.
func Parent(pid int) int {
	s, err := stat(pid)
	if err != nil {
		return 0
	}
	return s.PPID
}

// Machine is the CPU time of the whole machine so far, from /proc/stat:
// busy (every state but idle and iowait) and all, summed over its CPUs.
func Machine() (busy, all time.Duration, err error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, err
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/stat: %w", err)
	}
	c := st.CPUTotal
	// procfs gives each state in seconds, a float of whole ticks: each is
	// rounded to the millisecond before the sums, so that the same ticks
	// always give the same durations (summed as floats, busy once went
	// back by a nanosecond between two readings).
	ms := func(s float64) time.Duration { return time.Duration(math.Round(s*1000)) * time.Millisecond }
	idle := ms(c.Idle) + ms(c.Iowait)
	busy = ms(c.User) + ms(c.Nice) + ms(c.System) + ms(c.IRQ) + ms(c.SoftIRQ) + ms(c.Steal)
	return busy, busy + idle, nil
}
