//go:build linux

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lanleader holding the virtual address (--vip), seen by its user: 3 to 5
// hosts run `lanleader run --vip 198.18.0.100/24` and vipecho, the client
// host asks the address every millisecond. Each scenario applies a fault
// and checks, with bounds of seconds (see bench/lanfailover -vip for the
// figures):
//
//   - the address is on exactly one host whenever the hosts agree: a
//     watcher reads every host's eth0 every vipWatchEvery, and whenever
//     the hosts of a group (the hosts that can reach each other) have
//     agreed on one leader and one term for vipGrace, the address must be
//     on that leader alone among them, and on no host outside every group
//     (a killed agent's host included: the address must not outlive its
//     agent); a frozen host is left out;
//   - after each failover the client's neighbour entry for the address
//     has the new leader's MAC, the client hears the new leader, and,
//     from its first answer on, no other host;
//   - when the test ends (every agent stopped with SIGTERM), the address
//     is on no interface of any namespace.
//
// They need a lanleader with --vip and skip, saying so, without it.

const (
	vipWatchEvery = 100 * time.Millisecond
	// vipGrace: how long an agreement stands before the address must
	// follow it: adding or removing it takes milliseconds; the grace
	// keeps the watcher's reads and the observer's polls, taken at
	// slightly different moments, from failing a test during a
	// transition.
	vipGrace = 1500 * time.Millisecond
	// vipMoveBound: a failover's new holder is heard, and the client's
	// neighbour entry follows (a gratuitous ARP; at worst the client's
	// own ARP after its entry for the old MAC fails, ≈ 5 s + 3 × 1 s).
	vipMoveBound = 15 * time.Second
	// announceDelay is the agents' vip_announce_delay (the default): a
	// new holder's second burst comes this long after its first.
	announceDelay = 5 * time.Second
	// vipReleaseBound: every agent stopped, the addresses are gone.
	vipReleaseBound = 5 * time.Second
)

// vipLAN is a lan whose agents hold VIP, with the client asking it.
type vipLAN struct {
	*lan
	client   *VIPClient
	watch    *vipWatch
	finished sync.Once
}

func startVIPLAN(t *testing.T, hosts int, extra ...string) *vipLAN {
	t.Helper()
	n := NewNetWithClient(t, hosts)
	RequireNFT(t)
	RequireVIP(t)
	n.StartResponders(t)
	l := &lan{Net: n, t: t, extra: append([]string{"--vip", VIPPrefix}, extra...)}
	l.obs = n.Observe(t, observeEvery)
	for i := range hosts {
		l.procs = append(l.procs, l.start(i))
	}
	took := l.waitAgree("all hosts find each other and agree on the largest", startBound, l.obs.Start, 0, l.All()...)
	t.Logf("%d hosts agree on host-%d %v after the start", hosts, hosts, took.Round(time.Millisecond))
	v := &vipLAN{lan: l}
	v.watch = newVIPWatch(t, l)
	v.watch.set([][]int{l.All()}, nil)
	v.client = n.StartVIPClient(t, VIP, time.Millisecond, 10*time.Minute)
	v.waitHolder("host-"+fmt.Sprint(hosts)+" holds the address, the client hears it", hosts-1, time.Time{}, startBound)
	// Should the test end before its deferred finish: registered last,
	// this runs first of the cleanups, the agents still there.
	t.Cleanup(v.finish)
	return v
}

// waitHolder waits until host alone of the live hosts has the address,
// the client's neighbour entry has its MAC, and it answered a request
// the client sent after t0; it returns the time from t0 to that first
// answer. Answers to requests sent before t0 are left out (SentSince).
func (v *vipLAN) waitHolder(what string, host int, t0 time.Time, bound time.Duration) time.Duration {
	v.t.Helper()
	var outage time.Duration
	waitFor(v.t, what, bound, func() (bool, string) {
		since := SentSince(v.client.AnswersSince(t0), t0)
		d, ok := Outage(since, t0, VIPHostName(host))
		if !ok {
			return false, fmt.Sprintf("no answer from %s yet (answers since: %v)", VIPHostName(host), AnswersBy(since, t0, time.Now().Add(time.Hour)))
		}
		outage = d
		h, mac, state, err := v.NeighbourHost(v.Client(), VIP)
		if err != nil {
			return false, err.Error()
		}
		if h != host {
			return false, fmt.Sprintf("the client's entry for %s: %q %s (host %d), want host-%d's MAC", VIP, mac, state, h+1, host+1)
		}
		return true, ""
	})
	// The watcher checks the holders once the agreement has stood for
	// vipGrace: the state is held until it has, so that every settled
	// state of a scenario is checked.
	v.watch.waitCheck(v.t, what)
	if !t0.IsZero() {
		v.t.Logf("%s: its first answer %v after the fault", what, outage.Round(100*time.Microsecond))
		if bad := Interleavings(SentSince(v.client.AnswersSince(t0), t0), t0.Add(outage)); len(bad) > 0 {
			v.t.Errorf("%s: after its first answer, other hosts answered:\n%s", what, strings.Join(bad, "\n"))
		}
	}
	return outage
}

// finish stops every agent (SIGTERM), checks that the address is on no
// namespace's interface, and reports the watcher's findings. A test
// defers it, so that it runs before the cleanups (which SIGKILL what
// still runs), and it runs once.
func (v *vipLAN) finish() { v.finished.Do(v.finishOnce) }

func (v *vipLAN) finishOnce() {
	t := v.t
	v.watch.stop()
	for i, p := range v.procs {
		if p.Exited() {
			continue
		}
		p.Signal(syscall.SIGTERM)
		if code, err := p.Wait(10 * time.Second); err != nil || code != 0 {
			t.Errorf("host-%d after SIGTERM at the end: exit %d, %v; want exit 0", i+1, code, err)
		}
	}
	var left []string
	for end := time.Now().Add(vipReleaseBound); ; time.Sleep(pollEvery) {
		var err error
		if left, err = v.AddrsOn(VIP); err != nil {
			t.Errorf("the end: %v", err)
			break
		}
		if len(left) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("every agent stopped, %s is still on %v %v later: left behind", VIP, left, vipReleaseBound)
	}
	checks, bad := v.watch.results()
	if len(bad) > 0 {
		t.Errorf("the address and the agreement disagreed %d times:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	if checks == 0 {
		t.Errorf("the watcher never saw a settled agreement: nothing was checked")
	}
	t.Logf("the watcher checked the holders of %s against a settled agreement %d times", VIP, checks)
	if sum, answers, err := v.client.Stop(); err != nil {
		t.Errorf("%v", err)
	} else {
		t.Logf("the client: %d requests, %d answers, %d send errors; answers by host %v", sum.Sent, sum.Answers, sum.SendErrors,
			AnswersBy(answers, sum.First, sum.Last.Add(time.Second)))
	}
}

// vipWatch checks, every vipWatchEvery, the holders of the address
// against the agreement of each group of hosts.
type vipWatch struct {
	l *lan

	mu     sync.Mutex
	groups [][]int // hosts that can reach each other
	frozen []int   // hosts not looked at
	since  []time.Time
	agreed []string // by group: "leader/term" of its current agreement
	checks int
	bad    []string

	done chan struct{}
	wg   sync.WaitGroup
}

func newVIPWatch(t *testing.T, l *lan) *vipWatch {
	w := &vipWatch{l: l, done: make(chan struct{})}
	w.wg.Add(1)
	go w.run()
	t.Cleanup(w.stop)
	return w
}

// set says which hosts are grouped (each group's agents agree among
// themselves) and which are frozen; the hosts in neither must hold
// nothing. Every group's agreement restarts.
func (w *vipWatch) set(groups [][]int, frozen []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.groups, w.frozen = groups, frozen
	w.since = make([]time.Time, len(groups))
	w.agreed = make([]string, len(groups))
}

func (w *vipWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
}

// waitCheck waits until the watcher has checked the holders against
// every group's settled agreement once more.
func (w *vipWatch) waitCheck(t *testing.T, what string) {
	t.Helper()
	w.mu.Lock()
	c0, groups := w.checks, len(w.groups)
	w.mu.Unlock()
	waitFor(t, what+": the watcher checks it", vipGrace+5*time.Second, func() (bool, string) {
		c, _ := w.results()
		return c >= c0+groups, fmt.Sprintf("%d checks since, want %d", c-c0, groups)
	})
}

func (w *vipWatch) results() (int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checks, slices.Clone(w.bad)
}

func (w *vipWatch) run() {
	defer w.wg.Done()
	tick := time.NewTicker(vipWatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-tick.C:
		}
		w.sample()
	}
}

func (w *vipWatch) sample() {
	w.mu.Lock()
	groups, frozen := w.groups, w.frozen
	w.mu.Unlock()
	t1 := time.Now()
	holds := map[int]bool{}
	for _, h := range w.l.All() {
		if slices.Contains(frozen, h) {
			continue
		}
		has, err := w.l.HasAddr(h, VIP)
		if err != nil {
			return // the test bed is going
		}
		holds[h] = has
	}
	// Agreement in polls from just before the addresses were read.
	after := t1.Add(-2 * observeEvery)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.EqualFunc(groups, w.groups, slices.Equal) {
		return // set() meanwhile
	}
	allSettled := true
	for g, hosts := range groups {
		st, _, err := w.l.obs.Status(hosts[0])
		ok := err == nil && st.LeaderID != 0
		if ok {
			ok, _ = w.l.obs.Agree(after, st.LeaderID, hosts...)
		}
		key := fmt.Sprintf("%d/%d", st.LeaderID, st.Term)
		if !ok {
			w.agreed[g], allSettled = "", false
			continue
		}
		if w.agreed[g] != key {
			w.agreed[g], w.since[g] = key, t1
		}
		if t1.Sub(w.since[g]) < vipGrace {
			allSettled = false
			continue
		}
		leader := int(st.LeaderID) - 1 // host i has node_id i+1
		var on []int
		for _, h := range hosts {
			if holds[h] {
				on = append(on, h)
			}
		}
		w.checks++
		if !slices.Equal(on, []int{leader}) && len(w.bad) < maxViolations {
			w.bad = append(w.bad, fmt.Sprintf("%s: %s agree on node %d (term %d) since %v, and %s is on %s",
				t1.Format("15:04:05.000"), hostList(hosts), st.LeaderID, st.Term, t1.Sub(w.since[g]).Round(time.Millisecond), VIP, listOr(on)))
		}
	}
	if !allSettled {
		return
	}
	for h, has := range holds {
		if has && !slices.ContainsFunc(groups, func(g []int) bool { return slices.Contains(g, h) }) && len(w.bad) < maxViolations {
			w.bad = append(w.bad, fmt.Sprintf("%s: every group settled, and %s is on host-%d, whose agent is in none (stopped, killed or cut off)",
				t1.Format("15:04:05.000"), VIP, h+1))
		}
	}
}

func listOr(hosts []int) string {
	if len(hosts) == 0 {
		return "no host"
	}
	return hostList(hosts)
}

// TestVIPLeaderCrash: the leader's agent is SIGKILLed: the others elect
// host-2, which takes the address; the dead agent's host must not keep
// it. Then host-3 returns and, by preemption, takes it back.
func TestVIPLeaderCrash(t *testing.T) {
	v := startVIPLAN(t, 3)
	defer v.finish()
	t0 := v.kill(2)
	v.watch.set([][]int{{0, 1}}, nil)
	v.waitAgree("host-1,2 agree on host-2 after host-3's crash", failoverBound, t0, 2, 0, 1)
	v.waitHolder("host-2 holds the address after host-3's crash", 1, t0, vipMoveBound)
	t1 := time.Now()
	v.procs[2] = v.start(2)
	v.watch.set([][]int{v.All()}, nil)
	v.waitAgree("host-3 is back and leads", rejoinBound, t1, 3, v.All()...)
	v.waitHolder("host-3 holds the address again", 2, t1, vipMoveBound)
}

// TestVIPLeaderFreeze: the leader's host freezes whole (every process of
// its namespace SIGSTOPped, its bridge port down): the others elect
// host-2, which takes the address. Thawed, host-3 (which still has the
// address, and still believes it leads) hears the newer term, and by
// preemption leads again: the address ends on host-3 alone.
func TestVIPLeaderFreeze(t *testing.T) {
	v := startVIPLAN(t, 3)
	defer v.finish()
	t0 := time.Now()
	v.Freeze(t, 2)
	thawed := false
	defer func() {
		if !thawed {
			v.Thaw(t, 2)
		}
	}()
	v.watch.set([][]int{{0, 1}}, []int{2})
	v.waitAgree("host-1,2 agree on host-2 while host-3 is frozen", failoverBound, t0, 2, 0, 1)
	v.waitHolder("host-2 holds the address while host-3 is frozen", 1, t0, vipMoveBound)
	t1 := time.Now()
	v.Thaw(t, 2)
	thawed = true
	v.watch.set([][]int{v.All()}, nil)
	v.waitAgree("host-3 leads again after the thaw", rejoinBound, t1, 3, v.All()...)
	v.waitHolder("host-3 holds the address again after the thaw", 2, t1, vipMoveBound)
}

// TestVIPGracefulStop: SIGTERM: the leader removes the address as it
// stops (after its job), resigns, and host-2 takes the address.
func TestVIPGracefulStop(t *testing.T) {
	v := startVIPLAN(t, 3)
	defer v.finish()
	t0 := v.term(2)
	if has, err := v.HasAddr(2, VIP); err != nil || has {
		t.Errorf("host-3's agent exited 0 after SIGTERM, and %s is on its eth0: %v (%v)", VIP, has, err)
	}
	v.watch.set([][]int{{0, 1}}, nil)
	v.waitAgree("host-1,2 agree on host-2 after host-3's SIGTERM", failoverBound, t0, 2, 0, 1)
	v.waitHolder("host-2 holds the address after host-3's SIGTERM", 1, t0, vipMoveBound)
}

// TestVIPResign: `lanleader resign` on the leader: host-2 takes the
// address; after the hold-off (--preempt-delay 5s, long enough for the
// watcher to check host-2's tenure), host-3 takes it back.
func TestVIPResign(t *testing.T) {
	v := startVIPLAN(t, 3, "--preempt-delay", "5s")
	defer v.finish()
	before, _ := v.watch.results()
	t0 := time.Now()
	if out, err := v.Exec(2, "lanleader", "resign", "--timeout", "8s"); err != nil {
		t.Fatalf("lanleader resign on host-3: %v\n%s", err, out)
	}
	v.waitAgree("host-1,2,3 agree on host-2 after host-3 resigned", failoverBound, t0, 2, v.All()...)
	v.waitHolder("host-2 holds the address after host-3 resigned", 1, t0, vipMoveBound)
	t1 := time.Now()
	v.waitAgree("host-3 leads again after its hold-off", rejoinBound, t1, 3, v.All()...)
	if checks, _ := v.watch.results(); checks == before {
		t.Errorf("the watcher checked nothing while host-2 led")
	}
	v.waitHolder("host-3 holds the address again after its hold-off", 2, t1, vipMoveBound)
}

// TestVIPPartition: 5 hosts cut 2|3: without quorum each side elects
// (host-2 in the minority, host-5 keeps the majority) and each side's
// leader holds the address among its side; the client, on the bridge,
// reaches both. Healed, the minority follows host-5 again, host-2 drops
// the address, and the client's entry ends on host-5.
func TestVIPPartition(t *testing.T) {
	v := startVIPLAN(t, 5)
	defer v.finish()
	minority, majority := []int{0, 1}, []int{2, 3, 4}
	t0 := time.Now()
	v.Partition(t, minority, majority)
	v.watch.set([][]int{minority, majority}, nil)
	v.waitAgree("host-1,2 agree on host-2 in the minority", failoverBound, t0, 2, minority...)
	waitFor(t, "host-2 and host-5 hold the address, each on its side", vipMoveBound, func() (bool, string) {
		h, err := v.Holders(VIP)
		return err == nil && slices.Equal(h, []int{1, 4}), fmt.Sprintf("%s is on %s (%v)", VIP, listOr(h), err)
	})
	time.Sleep(2 * vipGrace) // the partition held: the watcher checks both sides
	t1 := time.Now()
	v.Heal(t)
	v.watch.set([][]int{v.All()}, nil)
	v.waitAgree("all five agree on host-5 after the heal", rejoinBound, t1, 5, v.All()...)
	agreed := time.Now()
	waitFor(t, "host-5 alone holds the address after the heal", vipMoveBound, func() (bool, string) {
		h, err := v.Holders(VIP)
		return err == nil && slices.Equal(h, []int{4}), fmt.Sprintf("%s is on %s (%v)", VIP, listOr(h), err)
	})
	// The client may have moved to host-2 during the partition, or at the
	// heal (host-2 hears host-5 first when the heal reaches host-5's input
	// last, and announces again, two heartbeats later, before host-5
	// claims a later term): it must end on host-5, and stay there. Both
	// led until the agreement; from then on host-5 alone answers, and
	// within its second burst (announce_delay, 5s, after its claim in the
	// later term), which moves a client whose kernel kept host-2's MAC
	// (Linux ignores a new MAC within a second of the last).
	if outage := v.waitHolder("the client hears host-5 once all five follow it", 4, agreed, vipMoveBound); outage > announceDelay+time.Second {
		t.Errorf("the client heard host-5 %v after all five followed it, want within its second burst (%v)", outage, announceDelay)
	}
}

// TestVIPLinkDown: the leader's eth0 goes down: its agent leaves the
// election and drops the address; host-2 takes it. The link back up,
// host-3 rejoins and takes the address back.
func TestVIPLinkDown(t *testing.T) {
	v := startVIPLAN(t, 3)
	defer v.finish()
	t0 := time.Now()
	v.SetLink(t, 2, false)
	up := false
	defer func() {
		if !up {
			v.SetLink(t, 2, true)
		}
	}()
	v.watch.set([][]int{{0, 1}}, nil)
	v.waitAgree("host-1,2 agree on host-2 after host-3's link went down", failoverBound, t0, 2, 0, 1)
	v.waitHolder("host-2 holds the address after host-3's link went down", 1, t0, vipMoveBound)
	waitFor(t, "host-3 drops the address when its link is down", vipMoveBound, func() (bool, string) {
		has, err := v.HasAddr(2, VIP)
		return err == nil && !has, fmt.Sprintf("host-3 has %s: %v (%v)", VIP, has, err)
	})
	t1 := time.Now()
	v.SetLink(t, 2, true)
	up = true
	v.watch.set([][]int{v.All()}, nil)
	v.waitAgree("host-3 leads again with its link up", rejoinBound, t1, 3, v.All()...)
	v.waitHolder("host-3 holds the address again with its link up", 2, t1, vipMoveBound)
}
