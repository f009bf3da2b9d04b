package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	alive := false
	if !scanGroup(pgid, func(int) { alive = true }) {
		return true
	}
	return alive
}

// groupMembers lists the processes of group pgid but self that still run
// (zombies left out), from /proc; false when /proc cannot be read.
func groupMembers(pgid, self int) ([]int, bool) {
	var pids []int
	ok := scanGroup(pgid, func(pid int) {
		if pid != self {
			pids = append(pids, pid)
		}
	})
	return pids, ok
}

// scanGroup calls f with the pid of every process of group pgid that
// runs (not a zombie), from /proc/PID/stat; false when /proc cannot be
// listed. One open, read and close a process, no allocation past the
// listing: the notice waits on it after a crash.
func scanGroup(pgid int, f func(pid int)) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	var path [32]byte
	var buf [512]byte
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		p := append(append(append(path[:0], "/proc/"...), name...), "/stat"...)
		fd, err := unix.Open(string(p), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone since the listing
		}
		n, _ := unix.Read(fd, buf[:])
		unix.Close(fd)
		if n <= 0 {
			continue
		}
		state, pg, ok := statFields(buf[:n])
		if !ok || state == 'Z' || state == 'X' || pg != pgid {
			continue
		}
		if pid, err := strconv.Atoi(name); err == nil {
			f(pid)
		}
	}
	return true
}

// statFields reads the state and the process group from /proc/PID/stat:
// "pid (comm) S ppid pgrp ...", comm may hold spaces and parentheses.
func statFields(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}
