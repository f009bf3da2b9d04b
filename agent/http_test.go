package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestStatusContract: /status carries exactly the fields of the design's
// contract with their JSON types and values, /healthz answers, /metrics
// has every metric the design names, and nothing is writable.
func TestStatusContract(t *testing.T) {
	l := startLocal(t, LocalOptions{Nodes: 2, HTTP: true, Base: func(c *Config) { c.Version = "v-test" }})
	ag := waitLeader(t, l, electBound, 1)
	leader := l.Agents[1]
	base := "http://" + leader.HTTPAddr()

	code, body := get(t, base+"/status")
	if code != 200 {
		t.Fatalf("/status: %d %s", code, body)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("/status is not JSON: %v\n%s", err, body)
	}
	want := map[string]any{
		"name": "node-2", "node_id": 2.0, "priority": 100.0, "state": "leader", "term": float64(ag.Term),
		"leader_id": 2.0, "leader_name": "node-2", "algorithm": "bully",
	}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("/status %s = %#v, want %#v", k, doc[k], v)
		}
	}
	members, ok := doc["members"].([]any)
	if !ok || len(members) != 1 {
		t.Fatalf("/status members = %#v, want one member", doc["members"])
	}
	m := members[0].(map[string]any)
	other := l.Agents[0]
	wantM := map[string]any{"name": "node-1", "node_id": 1.0, "priority": 100.0,
		"addr": other.GossipAddr().String(), "alive": true}
	for k, v := range wantM {
		if m[k] != v {
			t.Errorf("/status members[0].%s = %#v, want %#v", k, m[k], v)
		}
	}

	// A follower names its leader.
	code, body = get(t, "http://"+other.HTTPAddr()+"/status")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("follower /status: %d %v", code, err)
	}
	if st.State != "follower" || st.LeaderID != 2 || st.LeaderName != "node-2" || st.Term != ag.Term {
		t.Errorf("follower /status: %+v", st)
	}

	code, body = get(t, base+"/healthz")
	if wantBody := fmt.Sprintf("ok leader term %d leader 2\n", ag.Term); code != 200 || body != wantBody {
		t.Errorf("/healthz: %d %q, want 200 %q", code, body, wantBody)
	}

	code, body = get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	// Every name of the design, and values that follow from the state.
	for _, name := range []string{
		"lanleader_is_leader", "lanleader_term", "lanleader_leader_info", "lanleader_state", "lanleader_members",
		"lanleader_elections_total", "lanleader_leader_changes_total", "lanleader_messages_sent_total",
		"lanleader_messages_received_total", "lanleader_packets_dropped_total", "lanleader_failover_seconds",
		"lanleader_job_running", "lanleader_job_restarts_total", "lanleader_build_info",
		"go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(body, "\n# TYPE "+name+" ") {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for _, line := range []string{
		"lanleader_is_leader 1",
		fmt.Sprintf("lanleader_term %d", ag.Term),
		`lanleader_leader_info{leader_id="2",leader_name="node-2"} 1`,
		`lanleader_state{state="leader"} 1`,
		`lanleader_state{state="follower"} 0`,
		`lanleader_members{status="alive"} 1`,
		`lanleader_elections_total{result="won"} 1`,
		`lanleader_build_info{version="v-test"} 1`,
	} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("/metrics lacks the line %q", line)
		}
	}

	// Read-only: no other method, no other path.
	for _, path := range []string{"/status", "/metrics", "/healthz"} {
		resp, err := http.Post(base+path, "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %d, want 405", path, resp.StatusCode)
		}
	}
	if code, _ := get(t, base+"/nope"); code != 404 {
		t.Errorf("/nope: %d, want 404", code)
	}
}
