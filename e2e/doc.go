// Package e2e tests real lanleader agents on real hosts: each host is a
// Linux network namespace, joined by a veth pair to one Linux bridge, with
// addresses from 198.18.0.0/15 and multicast groups from 239.255.0.0/16
// only. The same test bed runs the LAN benchmark (bench/lanfailover).
//
// The tests need root (to create namespaces), the ip command of iproute2
// and, for faults and packet counts, the nft command of nftables; without
// them they skip, saying why. ./test.sh installs both when it runs as
// root. Run them with
//
//	sudo go test -count=1 -v ./e2e
//	sudo go test -count=1 -v -run Scenario ./e2e    # the fault scenarios only
//
// # The test bed
//
// NewNet makes the hosts (up to 128): host i is namespace
// llt-<i+1>-<suffix> (hosts 100 to 128 are llt-a0-… to llt-c8-…, so that
// names stay within 15 bytes) with lo and eth0 at 198.18.0.<i+1>/24, IPv6
// off, IGMPv1 (whose reports go to the group itself). The bridge has no
// uplink and no address, so nothing leaves it. Beyond 98 hosts a host has
// VIP's address (198.18.0.100): the VIP tests use at most 98.
//
// Big beds: Linux's neighbour (ARP) table is one for all namespaces, and
// its default limit (net.ipv4.neigh.default.gc_thresh3 = 1024) is reached
// near 40 hosts, after which sends fail silently (ENOBUFS, counted only in
// SndbufErrors) and every host elects itself. A bed of 40 hosts or more
// raises gc_thresh1/2/3 to (n+1)², 2(n+1)², 4(n+1)² while it lives, shared
// with the other test processes of the machine through /run/llt-neigh
// (under a flock of /run/llt-neigh.lock): limits are never lowered below
// what a live bed wants, and the values found before the first raise come
// back when the last bed goes (neigh.go). Every bed, big or not, reads
// each host's SndbufErrors when it is torn down and fails the test when
// one is not 0 (SendFailures). Start runs the lanleader binary, built once per run from
// ./cmd/lanleader, in a host (ip netns exec, which execs it: the pid is
// lanleader's); its output goes to a log file. Sockets that the test
// process opens to a host (Get, SendUDP, the observer) are opened inside
// the host's namespace, on a locked OS thread that enters it with setns,
// so they reach the agent on the host's own loopback.
//
// A host may also have a clock of its own: a time namespace (made with
// unshare --time and kept in a file under /run/llt-timens) whose
// CLOCK_MONOTONIC is the machine's shifted by an offset; the agent is then
// started with nsenter --time=FILE ip netns exec ..., the same pid all the
// way. The quorum test gives each host an offset days apart from the
// others, so that anything comparing monotonic times across hosts breaks.
//
// # Faults
//
//   - a process: SIGKILL (crash), SIGSTOP and SIGCONT (a paused host),
//     SIGTERM (graceful stop), and a restart (Start again);
//   - the network, with nftables rules in the input hook of each host's
//     own table (netem is not available in every kernel): Cut (one way:
//     packets from some hosts do not reach others), Partition (both ways),
//     Loss (a percentage of the UDP and TCP packets each host receives,
//     drawn independently with numgen random); Heal removes them all.
//     Dropped reads the rules' counters, so a test can show its fault bit.
//
// Faults act on eth0 only: the observer, which talks to each agent over
// the host's loopback, keeps seeing every host.
//
// # The observer
//
// Observe polls every agent's /status and reads every agent's JSON log,
// and records every change of state, term or leader at every host, on one
// clock: every host is a namespace of this machine, so the agents' log
// stamps and the observer's polls share the wall clock. Agree checks the
// invariant (one leader and one term among a set of hosts, the leader
// among them and leading, by default the largest key); Settle times from
// the logs when the first host, and the last, named a new leader; Trace
// prints the whole record, which a failing scenario shows.
//
// # Packets on the wire
//
// CountPackets adds nftables counters on the bridge (a table of the bridge
// family in this process's namespace) that count each frame once as it
// enters the bridge: election packets (by type: heartbeats and discovery
// beacons apart), memberlist's, and VRRP's (for keepalived).
//
// # What the user of a virtual address sees
//
// NewNetWithClient adds a client host: one more namespace on the bridge,
// at the address after the last host's, that runs no agent (Client() is
// its index; Hosts and All leave it out). StartResponders runs vipecho
// (e2e/internal/vipecho) on every host: it answers UDP and TCP on
// EchoPort, on any address (it binds 0.0.0.0, and answers from the
// address it was asked on), with its host's name. StartVIPClient runs
// vipclient (e2e/internal/vipclient) on the client: it asks an address
// every millisecond and records each answer (send and receive times, the
// answering host) as a JSON line. Outage (from a fault to the first
// answer of the new holder), LongestGap, AnswersBy and Interleavings read
// that record; Holders and HasAddr say which hosts have the address on
// eth0; NeighbourHost maps the client's neighbour entry for it (ip neigh)
// to the host whose MAC it has. Freeze stops a host whole (SIGSTOP to
// every process of its namespace, its bridge port down) and Thaw resumes
// it; SetLink takes a host's eth0 down or up. KeepalivedInstances runs
// keepalived with one virtual address (the harness's reference);
// RequireVIP skips a test when the lanleader under test has no --vip.
//
// # Cleaning up
//
// Every object the test bed creates is named with the prefix "llt-" (the
// bridge's counter table "llt_br<suffix>"), where the suffix is the test
// process's pid and a letter; the lanleader build is in
// <tmp>/llt-bin-<pid>-<random>. Everything is removed by t.Cleanup (the
// build by Main or RemoveBinary), also when a test fails: processes by
// pid, then the namespaces (with their nftables rules), the veths, the
// bridge and its counters, the time namespaces (unmounted, their files
// removed). A new run first removes what a killed run left
// (objects whose pid is no longer a running test binary), killing the
// processes left in those namespaces by pid.
package e2e
