package proc

import (
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// sweepBound bounds the wait for a killed process group to be gone.
const sweepBound = 2 * time.Second

// sweep kills what is left of an exited job's group and waits, bounded,
// until the group is gone: a job has stopped when nothing of it runs.
func (s *Supervisor) sweep(p *jobProc) {
	if p.pgid <= 0 || !groupAlive(p.pgid) { // a unit has no group of ours
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
	procs, err := procfs.AllProcs()
	if err != nil {
		return true
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.State == "Z" || st.State == "X" {
			continue // gone since the listing, or a zombie
		}
		if st.PGRP == pgid {
			return true
		}
	}
	return false
}

// groupMembers lists the processes of group pgid but self that still run
// (zombies left out), from /proc; false when /proc cannot be read.
func groupMembers(pgid, self int) ([]int, bool) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil, false
	}
	var pids []int
	for _, p := range procs {
		if p.PID == self {
			continue
		}
		st, err := p.Stat()
		if err != nil || st.State == "Z" || st.State == "X" || st.PGRP != pgid {
			continue
		}
		pids = append(pids, p.PID)
	}
	return pids, true
}
