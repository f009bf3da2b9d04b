package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// sweepBound bounds the wait for a killed process group to be gone.
const sweepBound = 2 * time.Second

// sweep kills what is left of an exited job's group and waits, bounded,
// until the group is gone: a job has stopped when nothing of it runs.
func (s *Supervisor) sweep(p *jobProc) {
	if !groupAlive(p.pgid) {
		return
	}
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	deadline := time.Now().Add(sweepBound)
	for groupAlive(p.pgid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling the kernel; nothing to wait on
	}
	if groupAlive(p.pgid) {
		s.log.Warn("processes of the job's group are still there after SIGKILL", "pgid", p.pgid)
	}
}

// groupAlive says whether a process of group pgid still runs. A zombie
// does not: the processes the job left behind are reaped by init (or a
// subreaper) in its own time, which may be late. When /proc cannot be
// read, a group the kernel still knows counts as alive.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			return true
		}
	}
	return false
}
