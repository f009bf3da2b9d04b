package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent"
	"github.com/lanleader/lanleader/internal/freeport"
	"github.com/lanleader/lanleader/internal/syncbuf"
	"github.com/lanleader/lanleader/internal/waitfor"
)

// TestNoticeOnCrash: three `lanleader run` processes on loopback; the
// leader, which runs a job, is SIGKILLed. Its notice guard sends the
// NOTICE once the job is dead, and the two others agree on a new leader
// well within suspect_after (5s here): they say they heard the notice,
// and the failover did not wait for their detector. Quorum mode alike,
// with its lease.
func TestNoticeOnCrash(t *testing.T) {
	for _, mode := range []string{"default", "quorum"} {
		t.Run(mode, func(t *testing.T) {
			const suspect = 5 * time.Second
			type node struct {
				cmd  *exec.Cmd
				out  *syncbuf.Buffer
				http string
			}
			var nodes []node
			var seed string
			for i := range 3 {
				gossip := freeport.Get(t)
				httpAddr := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
				args := []string{"run", "--name", fmt.Sprintf("n%d", i+1), "--node-id", fmt.Sprint(i + 1),
					"--priority", fmt.Sprint(100 + 10*i), "--bind", fmt.Sprintf("127.0.0.1:%d", gossip),
					"--election-port", fmt.Sprint(freeport.Get(t)), "--transport", "unicast", "--http", httpAddr,
					"--heartbeat", "200ms", "--suspect-after", suspect.String()}
				if mode == "quorum" {
					args = append(args, "--quorum", "3", "--state-file", fmt.Sprintf("%s/n%d.state", t.TempDir(), i+1))
				}
				if seed != "" {
					args = append(args, "--join", seed)
				}
				args = append(args, "--", "sleep", "1000")
				seed = fmt.Sprintf("127.0.0.1:%d", gossip)
				cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
				cmd.Env = append(os.Environ(), "LANLEADER_AS_MAIN=1")
				out := &syncbuf.Buffer{}
				cmd.Stdout, cmd.Stderr = out, out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					cmd.Process.Kill() // by pid
					cmd.Wait()
					if t.Failed() {
						t.Logf("n%d's output:\n%s", i+1, out)
					}
				})
				nodes = append(nodes, node{cmd, out, httpAddr})
				// Up before the next joins it.
				waitfor.Until(t, fmt.Sprintf("n%d's /status", i+1), 10*time.Second, 10*time.Millisecond, func() (bool, string) {
					resp, err := http.Get("http://" + httpAddr + "/status")
					if err != nil {
						return false, err.Error()
					}
					resp.Body.Close()
					return true, ""
				})
			}
			status := func(n node) agent.Status {
				var st agent.Status
				if resp, err := http.Get("http://" + n.http + "/status"); err == nil {
					json.NewDecoder(resp.Body).Decode(&st)
					resp.Body.Close()
				}
				return st
			}
			agree := func(ns []node, leader uint64) (bool, string) {
				var why []string
				for _, n := range ns {
					st := status(n)
					why = append(why, fmt.Sprintf("%s %s leader %d term %d", st.Name, st.State, st.LeaderID, st.Term))
					if st.LeaderID != leader || leader == 0 {
						return false, strings.Join(why, "; ")
					}
				}
				return true, ""
			}
			waitfor.Until(t, "n3 leads, its job runs", 20*time.Second, 20*time.Millisecond, func() (bool, string) {
				if ok, why := agree(nodes, 3); !ok {
					return false, why
				}
				return strings.Contains(nodes[2].out.String(), "job started"), ""
			})
			old := status(nodes[2]).Term
			t0 := time.Now()
			nodes[2].cmd.Process.Kill()
			took := waitfor.Until(t, "n1 and n2 agree on n2", 3*time.Second, 5*time.Millisecond, func() (bool, string) {
				return agree(nodes[:2], 2)
			})
			t.Logf("%s: the survivors agreed %v after the SIGKILL", mode, time.Since(t0).Round(time.Millisecond))
			if took >= suspect/2 {
				t.Errorf("the survivors agreed after %v: the failover waited for the detector (suspect_after %v)", took, suspect)
			}
			for i, n := range nodes[:2] {
				want := fmt.Sprintf(`msg="the leader's guard says it is gone, and its job with it: electing now" node=n%d leader=n3 leader_id=3 term=%d`, i+1, old)
				if !strings.Contains(n.out.String(), want) {
					t.Errorf("n%d's log lacks %q", i+1, want)
				}
			}
			if !strings.Contains(nodes[2].out.String(), "lanleader notice guard: the agent is gone and no job of it runs: sent the notice to 2 destinations") {
				t.Errorf("n3's notice guard did not say it sent the notice")
			}
		})
	}
}
