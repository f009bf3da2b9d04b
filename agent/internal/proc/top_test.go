package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fdLinks maps each descriptor of process pid to what it is (a
// readlink of /proc/PID/fd/N: "pipe:[INODE]", "socket:[INODE]", a path).
func fdLinks(t *testing.T, pid int) map[int]string {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[int]string)
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd)); err == nil {
			m[fd] = l
		}
	}
	return m
}

// ppid is process pid's parent.
func ppid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// "pid (comm) S ppid ...", comm may hold spaces and parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("/proc/%d/stat: %q: %v", pid, b, err)
	}
	return n
}

// TestDeathPipesAtTheTop: the agent's ends of every pipe that tells a
// guard of its death (the notice guard's input and hold pipe, the
// address keeper's input, the job guard's life pipe) are its highest
// descriptors, from topFD up, above every other file it has open, so
// that a killed agent's teardown releases them before its sockets
// (top.go).
func TestDeathPipesAtTheTop(t *testing.T) {
	dir := t.TempDir()
	out, stamps := filepath.Join(dir, "out"), filepath.Join(dir, "stamps")
	script := writeScript(t, `echo "up $$" >> "$1"
while :; do sleep 0.05; done
`)
	agent := startNotifiedWith(t, os.Stderr, []string{removalsEnv + "=" + filepath.Join(dir, "removals")}, time.Second,
		out, stamps, "keep", "--", script, stamps)
	notifier, keeper, job := pidIn(t, stamps, "notifier"), pidIn(t, stamps, "keeper"), pidIn(t, stamps, "up")
	guard := ppid(t, job)
	// The guards' read ends, named by their pipes.
	ends := map[string]string{
		"the notice guard's input":     fdLinks(t, notifier)[0],
		"the notice guard's hold pipe": fdLinks(t, notifier)[noticeHoldFD],
		"the keeper's input":           fdLinks(t, keeper)[0],
		"the job guard's life pipe":    fdLinks(t, guard)[0],
	}
	fds := fdLinks(t, agent.Process.Pid)
	lowestTop, highestOther := -1, -1
	for what, pipe := range ends {
		if !strings.HasPrefix(pipe, "pipe:") {
			t.Fatalf("%s is %q, want a pipe", what, pipe)
		}
		n := 0
		for fd, l := range fds {
			if l != pipe {
				continue
			}
			n++
			if fd < topFD {
				t.Errorf("the agent holds %s's write end on descriptor %d, want it at %d or above", what, fd, topFD)
			}
		}
		if n == 0 {
			t.Errorf("the agent holds no end of %s (%s); its descriptors: %v", what, pipe, fds)
		}
	}
	for fd, l := range fds {
		death := false
		for _, pipe := range ends {
			death = death || l == pipe
		}
		switch {
		case death && (lowestTop < 0 || fd < lowestTop):
			lowestTop = fd
		case !death && fd > highestOther:
			highestOther = fd
		}
	}
	if highestOther >= lowestTop {
		t.Errorf("the agent's descriptor %d (%s) is above the lowest of its death pipes, %d; its descriptors: %v",
			highestOther, fds[highestOther], lowestTop, fds)
	}
	agent.Process.Kill()
	agent.Wait()
	waitFor(t, "the notice sent", 5*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(out)
		return len(b) > 0, ""
	})
}

// TestGuardEndsTheJobAtTheEndOfItsLifePipe: the end of the life pipe
// alone (no death signal from the kernel: the agent is this test, alive)
// makes the job guard stop the job as at the agent's death.
func TestGuardEndsTheJobAtTheEndOfItsLifePipe(t *testing.T) {
	stamps := filepath.Join(t.TempDir(), "stamps")
	script := writeScript(t, `trap 'echo "stop $$" >> "$1"; exit 0' TERM
echo "up $$" >> "$1"
while :; do sleep 0.05; done
`)
	h := newHarness(t, Config{Argv: []string{script, stamps}, Grace: 5 * time.Second, FailureWindow: time.Minute})
	h.sup.Set(Want{Run: true, Gen: 1, Term: 3, Leader: 7})
	h.next(t, Started, 5*time.Second)
	job := pidIn(t, stamps, "up")
	h.sup.mu.Lock()
	life := h.sup.cur.life
	h.sup.mu.Unlock()
	if life == nil || life.Fd() < topFD {
		t.Fatalf("the life pipe's write end is %v, want one at %d or above", life, topFD)
	}
	life.Close()
	if stopped := pidIn(t, stamps, "stop"); stopped != job {
		t.Fatalf("%d stopped, want the job, %d", stopped, job)
	}
	waitFor(t, "the job gone", 3*time.Second, func() (bool, string) { return !alive(job), "" })
}
