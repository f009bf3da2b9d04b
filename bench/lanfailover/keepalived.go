//go:build linux

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lanleader/lanleader/bench/internal/procstat"
	"github.com/lanleader/lanleader/e2e"
)

// keepalived on the test bed: e2e's KeepalivedInstances (one VRRP
// instance per host on eth0, virtual_router_id kaVRID, priority 100+i, so
// host-K, the last, is the master and host-(K−1) takes over; advert_int
// the setting, preemption on; one virtual address, kaVIP; VRRPv2 for whole
// seconds, VRRPv3 otherwise, and the printed setting says which ran).
//
// The times come from one packet socket on the test bed's bridge, in this
// process's namespace: the kernel stamps each frame as it crosses from a
// host's veth into this namespace, within the sender's sendto, on the
// clock of t0 (CLOCK_REALTIME). keepalived's own log stamps are whole
// seconds; the logs are read for the states only.
const (
	kaVIP  = "198.18.0.200"
	kaVRID = 51
)

// ipProtoVRRP is VRRP's IP protocol number.
const ipProtoVRRP = 112

// kaGroup is VRRP's multicast group (RFC 5798): it stays on the bridge,
// which has no uplink.
var kaGroup = netip.MustParseAddr("224.0.0.18")

// kaDefinitions describes the keepalived columns to w.
func kaDefinitions(w io.Writer) {
	fmt.Fprintf(w, "# keepalived: first = host-(K−1)'s first VRRP advert after the kill (sent as it enters MASTER\n"+
		"#   state); all agree = its first gratuitous ARP for the virtual address %s, sent to every host\n"+
		"#   once the address is up on it (the backups keep no record of the master: its adverts reaching\n"+
		"#   them, at \"first\", are their agreement), and, should another backup also claim the master role,\n"+
		"#   not before host-(K−1)'s first advert after that backup's last; both are kernel stamps of the\n"+
		"#   frames entering the bridge (ns, on the kill's clock). packets = VRRP frames on the bridge from\n"+
		"#   the kill to \"all agree\". advert_int below 1 s or not whole seconds: VRRPv3 (v2 has whole seconds)\n", kaVIP)
}

// kaSetting finds keepalived and the VRRP version of advert, and names
// the setting in *setting.
func kaSetting(r *runner, advert time.Duration, setting *string) (bin string) {
	bin = kaBinary(r)
	version, _, err := e2e.KeepalivedAdvert(advert)
	if err != nil {
		r.Fatalf("%v", err)
	}
	*setting = fmt.Sprintf("advert_int %v (VRRPv%d)", advert, version)
	return bin
}

// measureKeepalived runs o.trials trials of mode on a fresh set of
// keepalived instances with advert_int advert, into res.
func measureKeepalived(r *runner, o options, advert time.Duration, mode string, rng *rand.Rand, res *result) {
	bin := kaSetting(r, advert, &res.Setting)

	n := e2e.NewNet(r, o.hosts)
	e2e.RequireNFT(r)
	n.CountPackets(r)
	top, next := o.hosts-1, o.hosts-2
	capt := kaListen(r, n)

	start := kaInstances(r, n, bin, advert)
	for i := range o.hosts {
		mac, err := n.Exec(i, "cat", "/sys/class/net/eth0/address")
		if err != nil {
			r.Fatalf("host-%d: %v", i+1, err)
		}
		capt.setMAC(i, strings.TrimSpace(mac))
	}
	procs := make([]*e2e.Proc, o.hosts)
	for i := range procs {
		procs[i] = start(i)
	}
	k := &kaBed{r: r, n: n, capt: capt, procs: procs, top: top, advert: advert}
	frozen := hostFreeze(r, n, top)

	since := time.Now()
	var trialsFrom []cpuTime
	var killSpan, readLag time.Duration
	for trial := range o.trials {
		r.checkInterrupt()
		k.settle(since, fmt.Sprintf("trial %d", trial+1))
		if trial == 0 {
			trialsFrom = k.cpuTimes()
		}
		time.Sleep(time.Duration(rng.Int64N(int64(advert))))
		what := fmt.Sprintf("trial %d", trial+1)
		var pids []int // listed before t0
		switch mode {
		case "crash":
			pids = k.pids(top)
		case "freeze":
			pids = frozen.list(r, what)
		}
		a0 := time.Now()
		p0, err := n.Packets()
		if err != nil {
			r.Fatalf("%v", err)
		}
		b0 := time.Now()
		t0 := time.Now()
		killEnd := t0
		switch mode {
		case "crash":
			// The VRRP child first: when the parent dies first, the child
			// stops gracefully ("sent 0 priority": seen with 2.2.7). The
			// parent is signalled before it can learn of the child's
			// death, so it respawns nothing (failedOver checks that no
			// advert of host-K follows).
			for _, pid := range pids {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					r.Fatalf("trial %d: SIGKILL %d: %v", trial+1, pid, err)
				}
			}
			killEnd = time.Now()
		case "freeze":
			// The parent first (see freeze.go): stopped, it sees nothing
			// of its child's stop. failedOver checks that no advert of
			// host-K follows the stops.
			killEnd = frozen.freeze(r, pids, what)
		default:
			if err := procs[top].Signal(syscall.SIGTERM); err != nil {
				r.Fatalf("trial %d: %v", trial+1, err)
			}
			killEnd = time.Now()
		}
		killSpan = max(killSpan, killEnd.Sub(t0))

		f, why := k.failover(t0, killEnd, mode)
		if why != "" {
			res.Failures = append(res.Failures, fmt.Sprintf("trial %d: no agreement on host-%d within %v: %s", trial+1, next+1, deadline, why))
			return
		}
		a1 := time.Now()
		p1, err := n.Packets()
		if err != nil {
			r.Fatalf("%v", err)
		}
		b1 := time.Now()
		readLag = max(readLag, f.lag)

		if mode != "freeze" {
			code, err := procs[top].Wait(10 * time.Second)
			if mode == "graceful" && (err != nil || code != 0) {
				r.Fatalf("trial %d: host-%d after SIGTERM: exit %d, %v; want exit 0", trial+1, top+1, code, err)
			}
			if !procs[top].Exited() {
				r.Fatalf("trial %d: host-%d still runs 10 s after the %s", trial+1, top+1, mode)
			}
			k.waitGone(top, what)
		}

		// Every frame the nftables counter saw from p0 to p1 was stamped
		// between a0 and b1; every frame stamped from b0 to a1, it saw.
		nft := p1.Sub(p0).VRRP
		if lo, hi := capt.count(b0, a1), capt.count(a0, b1); nft < lo || nft > hi {
			r.Fatalf("trial %d: the packet socket saw %d to %d VRRP frames, the bridge's counter %d: frames lost", trial+1, lo, hi, nft)
		}
		packets := capt.count(t0, f.all.Add(1))
		res.First = append(res.First, f.first.Sub(t0))
		res.All = append(res.All, f.all.Sub(t0))
		res.Packets = append(res.Packets, packets)
		r.Logf("keepalived advert_int %v %s trial %d: first %v, all %v, %d VRRP packets%s", advert, mode, trial+1,
			f.first.Sub(t0), f.all.Sub(t0), packets, f.note)

		since = time.Now()
		if mode == "freeze" {
			// Resumed, not restarted (see freeze.go): host-K's keepalived,
			// of the highest priority, takes the master role back, and
			// the next trial waits until it is the only master.
			frozen.unfreeze(r, what)
			continue
		}
		procs[top] = start(top)
	}
	k.settle(since, "after the last trial")
	trialsTo := k.cpuTimes()
	time.Sleep(r.idle.window) // the measurement window, not a synchronisation
	idleTo := k.cpuTimes()
	for i := range procs {
		u := usage{Host: i, TrialsCPU: -1, IdleCPU: percent(trialsTo[i], idleTo[i])}
		if i != top {
			u.TrialsCPU = percent(trialsFrom[i], trialsTo[i])
		}
		for _, pid := range k.pids(i) {
			rss, err := procstat.RSS(pid)
			if err != nil {
				r.Fatalf("host-%d: %v", i+1, err)
			}
			u.RSS += rss
		}
		res.Usage = append(res.Usage, u)
	}
	fmt.Fprintf(r.out, "# keepalived %s, %s: t0 within %v (the kill's system calls); frames read at most %v after their stamp\n",
		res.Setting, mode, killSpan.Round(time.Microsecond), readLag.Round(time.Microsecond))
}

// kaInstances writes the configuration of every host's keepalived (see
// e2e.KeepalivedInstances; the virtual address kaVIP) and returns the
// function that starts host i's.
func kaInstances(r *runner, n *e2e.Net, bin string, advert time.Duration) func(i int) *e2e.Proc {
	return n.KeepalivedInstances(r, e2e.Keepalived{Bin: bin, VRID: kaVRID, VIP: kaVIP, Advert: advert})
}

// kaBinary is keepalived's path; it skips the setting when there is none.
func kaBinary(r *runner) string {
	bin, err := e2e.KeepalivedBinary()
	if err != nil {
		r.Skip(err.Error())
	}
	return bin
}

// kaBed is the keepalived instances of one setting.
type kaBed struct {
	r      *runner
	n      *e2e.Net
	capt   *kaCapture
	procs  []*e2e.Proc
	top    int
	advert time.Duration
}

// settle waits until host-K is master and the others are backups: their
// logs say so, host-K's adverts are the last on the bridge, and only it
// has the virtual address. It aborts the setting when they are not
// within deadline.
func (k *kaBed) settle(since time.Time, what string) {
	why := ""
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(observeEvery) {
		if why = k.settled(since); why == "" {
			k.r.Logf("keepalived %s: host-%d master, the others backups, %v after its start", what, k.top+1, time.Since(since).Round(time.Millisecond))
			return
		}
	}
	k.r.Fatalf("%s: host-%d is not the only master within %v: %s", what, k.top+1, deadline, why)
}

func (k *kaBed) settled(since time.Time) string {
	for i, p := range k.procs {
		want := "BACKUP"
		if i == k.top {
			want = "MASTER"
		}
		if why := k.state(i, p, want); why != "" {
			return why
		}
	}
	last, ok := k.capt.lastAdvert(since)
	if !ok {
		return "no advert on the bridge"
	}
	if last.Host != k.top {
		return fmt.Sprintf("the last advert is host-%d's", last.Host+1)
	}
	if len(k.pids(k.top)) < 2 {
		return fmt.Sprintf("host-%d: no VRRP child process", k.top+1)
	}
	for i := range k.procs {
		out, err := k.n.Exec(i, "ip", "-4", "-o", "addr", "show", "dev", "eth0")
		if err != nil {
			return err.Error()
		}
		if has := strings.Contains(out, " "+kaVIP+"/"); has != (i == k.top) {
			return fmt.Sprintf("host-%d: has %s: %v", i+1, kaVIP, has)
		}
	}
	return ""
}

// state is "" when host i's keepalived runs and its log's last state is
// want; why not otherwise. It aborts when the keepalived has exited.
func (k *kaBed) state(i int, p *e2e.Proc, want string) string {
	if p.Exited() {
		code, err := p.Wait(0)
		k.r.Fatalf("host-%d: keepalived exited (%d, %v):\n%s", i+1, code, err, tail(p.Log(), 4096))
	}
	got := ""
	for l := range strings.SplitSeq(p.Log(), "\n") {
		if _, after, ok := strings.Cut(l, ") Entering "); ok {
			got, _, _ = strings.Cut(after, " ")
		}
	}
	if got != want {
		return fmt.Sprintf("host-%d: state %q, want %s", i+1, got, want)
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// kaTrial is what a trial measured.
type kaTrial struct {
	first, all time.Time     // kernel stamps
	lag        time.Duration // the longest a frame used waited to be read
	note       string
}

// failover waits until host-(K−1) is master and every other survivor is a
// backup after the kill, signalled from t0 to killEnd: "" and the times,
// or why not within deadline.
func (k *kaBed) failover(t0, killEnd time.Time, mode string) (kaTrial, string) {
	next := k.top - 1
	why := ""
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(observeEvery) {
		var f kaTrial
		if f, why = k.failedOver(t0, killEnd, mode); why == "" {
			return f, ""
		}
		if strings.HasPrefix(why, "!") {
			return f, why[1:]
		}
	}
	return kaTrial{}, fmt.Sprintf("host-%d: %s", next+1, why)
}

// failedOver is failover's test: a reason starting with "!" is final.
//
// The old master's own frames may still go out while the kill is being
// signalled (a SIGKILL ends a process when the sendto it runs returns),
// and, with a SIGTERM, until keepalived handles it: its last regular
// adverts, then one of priority 0. It must send nothing more.
func (k *kaBed) failedOver(t0, killEnd time.Time, mode string) (kaTrial, string) {
	next := k.top - 1
	var f kaTrial
	ev := k.capt.since(t0)
	var firstAdv, lastOther, garp *kaEvent
	stopped := false // host-K sent priority 0
	for j := range ev {
		e := &ev[j]
		switch {
		case !e.VRRP:
			if e.Host == next && garp == nil {
				garp = e
			}
		case e.Host == k.top:
			switch {
			case mode == "graceful" && e.Prio == 0 && !stopped:
				stopped = true
			case mode == "graceful" && e.Prio > 0 && !stopped:
			case (mode == "crash" || mode == "freeze") && e.At.Before(killEnd.Add(time.Millisecond)):
			default:
				return f, fmt.Sprintf("!host-%d sent an advert (priority %d) %v after the %s", k.top+1, e.Prio, e.At.Sub(t0), mode)
			}
		case e.Host == next && e.Prio > 0:
			if firstAdv == nil {
				firstAdv = e
			}
		case e.Prio > 0:
			lastOther = e
		}
	}
	if firstAdv == nil {
		return f, "no advert yet"
	}
	if garp == nil {
		return f, "no gratuitous ARP for " + kaVIP + " yet"
	}
	f.first, f.all = firstAdv.At, garp.At
	if f.all.Before(f.first) {
		f.all = f.first
	}
	if lastOther != nil {
		f.note = fmt.Sprintf(" (host-%d also claimed the master role)", lastOther.Host+1)
		agreed := false
		for _, e := range ev {
			if e.VRRP && e.Host == next && e.Prio > 0 && e.At.After(lastOther.At) {
				f.all = later(f.all, e.At)
				agreed = true
				break
			}
		}
		if !agreed {
			return f, fmt.Sprintf("host-%d advertises too", lastOther.Host+1)
		}
	}
	// Stable: a regular advert of the new master after the agreement, and
	// the logs agree.
	if !slices.ContainsFunc(ev, func(e kaEvent) bool { return e.VRRP && e.Host == next && e.Prio > 0 && e.At.After(f.all) }) ||
		time.Since(f.all) < k.advert {
		return f, "not stable yet"
	}
	for i := range k.top {
		want := "BACKUP"
		if i == next {
			want = "MASTER"
		}
		if why := k.state(i, k.procs[i], want); why != "" {
			return f, why
		}
	}
	for _, e := range ev {
		if e.At.After(f.all) {
			break
		}
		f.lag = max(f.lag, e.read.Sub(e.At))
	}
	return f, ""
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// pids is host i's keepalived processes, by the namespace's process list:
// the parent started by StartProgram and its children (the VRRP
// process), the children first.
func (k *kaBed) pids(i int) []int {
	parent := k.procs[i].Pid
	var children []int
	parentIn := false
	for _, pid := range nsPids(k.r, k.n.Namespace(i)) {
		switch {
		case pid == parent:
			parentIn = true
		case procstat.Parent(pid) == parent:
			children = append(children, pid)
		}
	}
	if parentIn {
		children = append(children, parent)
	}
	return children
}

// waitGone waits until host i's namespace has no process left.
func (k *kaBed) waitGone(i int, what string) {
	ns := k.n.Namespace(i)
	var left []int
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(observeEvery / 2) {
		if left = nsPids(k.r, ns); len(left) == 0 {
			return
		}
	}
	k.r.Fatalf("%s: processes %v left in host-%d's namespace 10 s after its keepalived ended", what, left, i+1)
}

// cpuTimes is every host's keepalived CPU time (the sum over its
// processes).
func (k *kaBed) cpuTimes() []cpuTime {
	out := make([]cpuTime, len(k.procs))
	for i := range k.procs {
		var sum time.Duration
		for _, pid := range k.pids(i) {
			c, err := procstat.CPU(pid)
			if err != nil {
				k.r.Fatalf("host-%d: %v", i+1, err)
			}
			sum += c
		}
		out[i] = cpuTime{sum, time.Now()}
	}
	return out
}

// nsPids is the processes in network namespace ns (ip netns pids).
func nsPids(r *runner, ns string) []int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
	if err != nil {
		r.Fatalf("ip netns pids %s: %v", ns, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// kaEvent is a frame of the capture.
type kaEvent struct {
	At   time.Time // the kernel's stamp
	read time.Time // when this process read it
	Host int       // the sender, -1 when not a host of the test bed
	VRRP bool      // a VRRP frame (IP protocol 112); else a gratuitous ARP for kaVIP
	Prio int       // VRRP: the priority (0: the master stops); -1 for another VRID
}

// kaCapture records the VRRP frames, and the gratuitous ARPs for kaVIP,
// that enter the bridge's own port (every frame the hosts flood: VRRP's
// group, broadcast), each once.
type kaCapture struct {
	r       *runner
	n       *e2e.Net
	f       *os.File
	mu      sync.Mutex
	macs    map[string]int
	ev      []kaEvent
	err     error
	done    chan struct{}
	closing atomic.Bool
	hosts   int
}

// kaListen opens the capture on the bridge of n (found as the master of
// host-1's veth) and reads it until the setting ends.
func kaListen(r *runner, n *e2e.Net) *kaCapture {
	master, err := os.Readlink("/sys/class/net/" + n.Namespace(0) + "/master")
	if err != nil {
		r.Fatalf("the test bed's bridge: %v", err)
	}
	br, err := net.InterfaceByName(filepath.Base(master))
	if err != nil {
		r.Fatalf("the test bed's bridge: %v", err)
	}
	proto := htons(unix.ETH_P_ALL)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(proto))
	if err != nil {
		r.Fatalf("packet socket: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: br.Index}); err != nil {
		unix.Close(fd)
		r.Fatalf("packet socket on %s: %v", br.Name, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		unix.Close(fd)
		r.Fatalf("packet socket: SO_TIMESTAMPNS: %v", err)
	}
	c := &kaCapture{r: r, n: n, f: os.NewFile(uintptr(fd), "packet:"+br.Name), macs: make(map[string]int),
		done: make(chan struct{}), hosts: n.Hosts()}
	go c.read()
	r.Cleanup(func() {
		c.closing.Store(true)
		c.f.Close()
		<-c.done
	})
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (c *kaCapture) setMAC(i int, mac string) {
	c.mu.Lock()
	c.macs[mac] = i
	c.mu.Unlock()
}

func (c *kaCapture) read() {
	defer close(c.done)
	rc, err := c.f.SyscallConn()
	if err != nil {
		c.fail(err)
		return
	}
	buf := make([]byte, 2048)
	oob := make([]byte, 128)
	vip := netip.MustParseAddr(kaVIP).As4()
	for {
		var n, oobn int
		var from unix.Sockaddr
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, oobn, _, from, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
			return rerr != unix.EAGAIN
		})
		now := time.Now()
		if err != nil {
			if !c.closing.Load() {
				c.fail(err)
			}
			return
		}
		if rerr != nil {
			c.fail(rerr)
			return
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		if !ok || ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		e := kaEvent{read: now, Host: -1}
		pkt := buf[:n]
		switch htons(ll.Protocol) {
		case unix.ETH_P_IP:
			if len(pkt) < 20 || pkt[0]>>4 != 4 || pkt[9] != ipProtoVRRP {
				continue
			}
			e.VRRP, e.Prio = true, -1
			src := netip.AddrFrom4([4]byte(pkt[12:16]))
			if b := src.As4(); b[0] == 198 && b[1] == 18 && b[2] == 0 && int(b[3]) >= 1 && int(b[3]) <= c.hosts {
				e.Host = int(b[3]) - 1
			}
			ihl := int(pkt[0]&0xf) * 4
			if netip.AddrFrom4([4]byte(pkt[16:20])) == kaGroup && len(pkt) >= ihl+3 && pkt[ihl+1] == kaVRID {
				e.Prio = int(pkt[ihl+2])
			}
		case unix.ETH_P_ARP:
			// Ethernet/IPv4 ARP: sender MAC at 8, sender IP at 14, target IP at 24.
			if len(pkt) < 28 || binary.BigEndian.Uint16(pkt[2:4]) != unix.ETH_P_IP ||
				[4]byte(pkt[14:18]) != vip || [4]byte(pkt[24:28]) != vip {
				continue
			}
			mac := net.HardwareAddr(pkt[8:14]).String()
			c.mu.Lock()
			if h, ok := c.macs[mac]; ok {
				e.Host = h
			}
			c.mu.Unlock()
		default:
			continue
		}
		stamped := false
		if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range cmsgs {
				if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
					sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
					nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
					e.At, stamped = time.Unix(sec, nsec), true
				}
			}
		}
		if !stamped {
			c.fail(errors.New("a frame without a kernel time stamp"))
			return
		}
		c.mu.Lock()
		// Frames stamped on two CPUs can be read out of order.
		k := len(c.ev)
		for k > 0 && c.ev[k-1].At.After(e.At) {
			k--
		}
		c.ev = slices.Insert(c.ev, k, e)
		c.mu.Unlock()
	}
}

func (c *kaCapture) fail(err error) {
	c.mu.Lock()
	c.err = fmt.Errorf("packet socket on the bridge: %v", err)
	c.mu.Unlock()
}

// since is the frames stamped at or after t, by stamp; it aborts the
// setting if the capture failed.
func (c *kaCapture) since(t time.Time) []kaEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		c.r.Fatalf("%v", c.err)
	}
	k, _ := slices.BinarySearchFunc(c.ev, t, func(e kaEvent, t time.Time) int { return e.At.Compare(t) })
	return slices.Clone(c.ev[k:])
}

// count is the VRRP frames stamped in [from, to).
func (c *kaCapture) count(from, to time.Time) uint64 {
	var n uint64
	for _, e := range c.since(from) {
		if e.VRRP && e.At.Before(to) {
			n++
		}
	}
	return n
}

// lastAdvert is the last advert with a priority above 0 since t.
func (c *kaCapture) lastAdvert(t time.Time) (kaEvent, bool) {
	ev := c.since(t)
	for j := len(ev) - 1; j >= 0; j-- {
		if ev[j].VRRP && ev[j].Prio > 0 {
			return ev[j], true
		}
	}
	return kaEvent{}, false
}
