package main

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/internal/absentaddr"
)

// TestCheckConfig: a valid config is summed up with exit 0; a bad one
// exits 2 naming the problem; one whose bind address is not on this host
// is summed up too, and exits 3 saying that run would wait for it;
// nothing starts either way.
func TestCheckConfig(t *testing.T) {
	good := writeConfig(t, "name: a\nnode_id: 7\npriority: 150\nbind: 127.0.0.1:7946\n")
	absent := absentaddr.Get(t)
	lo := loopbackName(t)
	bad := writeConfig(t, "name: a\nprioirty: 5\n")
	// The candidates' file, as a witness's: its job and its interface are
	// another host's.
	candidates := writeConfig(t, "name: a\nnode_id: 7\nbind: 127.0.0.1:7946\nquorum: 3\nvip: [\"192.0.2.100/24,dev=nosuch0\"]\njob: [/nonexistent/worker]\n")
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"good file", []string{"--config", good}, 0,
			"config OK: node a (node_id 7), priority 150, cluster lanleader, bind 127.0.0.1:7946, algorithm bully, no job\n", ""},
		{"flag over file", []string{"--config", good, "--priority", "9", "--", "true"}, 0,
			"config OK: node a (node_id 7), priority 9, cluster lanleader, bind 127.0.0.1:7946, algorithm bully, job true\n", ""},
		{"bad key", []string{"--config", bad}, 2, "", `line 2: unknown key "prioirty"`},
		{"bind not on this host", []string{"--config", good, "--bind", absent.String()}, 3,
			"config OK: node a (node_id 7), priority 150, cluster lanleader, bind " + absent.String() + ", algorithm bully, no job\n",
			"lanleader check-config: not ready now: bind " + absent.String() + ": address not on this host (it has "},
		{"bind not on this host, 30s to wait", []string{"--config", good, "--bind", absent.String(), "--start-timeout", "30s"}, 3,
			"config OK: node a (node_id 7), priority 150, cluster lanleader, bind " + absent.String() + ", algorithm bully, no job\n",
			"; run would wait --start-timeout (30s) for it, then exit 3\n"},
		{"vip outside the subnets of its interface", []string{"--config", good, "--vip", "192.0.2.100/24"}, 0,
			"config OK: node a (node_id 7), priority 150, cluster lanleader, bind 127.0.0.1:7946, algorithm bully, no job\n",
			"lanleader check-config: warning: vip 192.0.2.100/24: not in a subnet of " + lo + " (127.0.0.1/8): neighbours will not reach it by ARP unless routed\n"},
		{"bind [::]", []string{"--config", good, "--bind", "[::]"}, 2, "", "lanleader check-config: bind ::: give an IPv6 agent its address"},
		{"bad value", []string{"--config", good, "--priority", "0"}, 2, "", "--priority"},
		{"quorum 2", []string{"--config", good, "--quorum", "2"}, 2, "", "--quorum: 2 is below 3"},
		{"quorum 2 asked for", []string{"--config", good, "--quorum", "2", "--allow-small-quorum"}, 0,
			"config OK: node a (node_id 7), priority 150, cluster lanleader, bind 127.0.0.1:7946, algorithm bully, no job\n", ""},
		{"heartbeat above its ceiling", []string{"--config", good, "--heartbeat", "87600h"}, 2, "", "--heartbeat: 87600h is above the ceiling of 1m"},
		{"missing file", []string{"--config", "/nonexistent/lanleader.yaml"}, 2, "", "/nonexistent/lanleader.yaml"},
		{"job not found", []string{"--config", good, "--", "no-such-program-here"}, 2, "", "not found in PATH"},
		{"the candidates' file on a candidate", []string{"--config", candidates}, 2, "",
			`line 5: vip: 192.0.2.100/24: no interface "nosuch0" on this host`},
		{"the candidates' file on a witness", []string{"--config", candidates, "--role", "witness"}, 0,
			"config OK: node a (node_id 7), priority 100, cluster lanleader, bind 127.0.0.1:7946, algorithm bully, job /nonexistent/worker\n",
			"lanleader check-config: warning: role witness: this node never leads, so the job never runs here\n" +
				"lanleader check-config: warning: role witness: this node never leads, so the virtual addresses (--vip) are never held here\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"check-config"}, tc.args...), &out, &errb)
			if code != tc.code || out.String() != tc.out || !strings.Contains(errb.String(), tc.errs) || (tc.errs == "") != (errb.Len() == 0) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tc.code, tc.out, tc.errs)
			}
		})
	}
	var out bytes.Buffer
	if code := run([]string{"check-config", "-h"}, &out, &out); code != 0 || !strings.Contains(out.String(), "usage: lanleader check-config") {
		t.Errorf("-h: exit %d: %s", code, out.String())
	}
}

// loopbackName is the name of the loopback interface, which holds
// 127.0.0.1/8 only.
func loopbackName(t *testing.T) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}
