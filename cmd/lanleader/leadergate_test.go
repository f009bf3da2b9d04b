package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// leaderServer serves body with code at GET /leader, 404 elsewhere.
func leaderServer(t *testing.T, code int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/leader" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(code)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

const (
	leaderBody   = `{"node":"host-a","node_id":3,"leader":true,"state":"leader","term":7,"leader_id":3}`
	followerBody = `{"node":"host-b","node_id":2,"leader":false,"state":"follower","term":7,"leader_id":3}`
)

// TestStatusIsLeader: each exit status of status --is-leader.
func TestStatusIsLeader(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		code       int
		out        string
	}{
		{"leader", leaderServer(t, 200, leaderBody), 0, "leader, term 7\n"},
		{"follower", leaderServer(t, 503, followerBody), 1, "not the leader: follower, term 7, leader_id 3\n"},
		{"unreachable", refusingAddr(t), 3, ""},
		{"not an agent", leaderServer(t, 200, "<html>"), 3, ""},
		{"status and body disagree", leaderServer(t, 200, followerBody), 3, ""},
		{"other status", leaderServer(t, 500, "boom"), 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := statusRun("--is-leader", "--http", tc.addr)
			if code != tc.code || out != tc.out || (code == 3) != (errOut != "") {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q", code, out, errOut, tc.code, tc.out)
			}
		})
	}
	if code, _, _ := statusRun("--is-leader", "--http", "nowhere"); code != 2 {
		t.Errorf("bad --http: exit %d, want 2", code)
	}
}

// TestExecIfLeader: on the leader the command runs (exec) with the term in
// its environment and its exit status is lanleader's; elsewhere nothing
// runs and the exit is 0; an unreachable agent is 3, bad usage 2.
func TestExecIfLeader(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	script := `echo "$LANLEADER_TERM $LANLEADER_NODE_ID $LANLEADER_LEADER_ID $LANLEADER_NAME" > ` + mark + `; exit 7`
	leader, follower := leaderServer(t, 200, leaderBody), leaderServer(t, 503, followerBody)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		ran    string
		stderr string
	}{
		{"leader", []string{"--http", leader, "--", "sh", "-c", script}, 7, "7 3 3 host-a\n", ""},
		{"follower", []string{"--http", follower, "--", "sh", "-c", script}, 0, "", ""},
		{"follower verbose", []string{"--verbose", "--http", follower, "--", "sh", "-c", script}, 0, "", "not the leader (follower, term 7, leader_id 3)"},
		{"unreachable", []string{"--http", refusingAddr(t), "--", "sh", "-c", script}, 3, "", "cannot reach the agent"},
		{"no command", []string{"--http", leader}, 2, "", "no command"},
		{"bad flag", []string{"--htp", leader, "--", "true"}, 2, "", "htp"},
		{"not found", []string{"--http", leader, "--", "no-such-program-here"}, 127, "", "not found in PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exec.Command("rm", "-f", mark).Run()
			cmd, _ := lanleader(t, append([]string{"exec-if-leader"}, tc.args...)...)
			var errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = nil, &errb
			cmd.Run()
			ran := readFile(mark)
			if code := cmd.ProcessState.ExitCode(); code != tc.code || ran != tc.ran || !strings.Contains(errb.String(), tc.stderr) ||
				tc.stderr == "" && errb.Len() > 0 {
				t.Errorf("exit %d, ran %q, stderr %q; want %d, %q, %q", code, ran, errb.String(), tc.code, tc.ran, tc.stderr)
			}
		})
	}
}

// readFile is the file's text, "" when it does not exist.
func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
