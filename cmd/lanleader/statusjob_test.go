package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lanleader/lanleader/agent"
)

// TestStatusJob: `lanleader status` has a job line: the command or the
// unit, its state, and how it last ended; a job of job mode once that
// finished says so, with its status.
func TestStatusJob(t *testing.T) {
	for _, tc := range []struct{ job, want string }{
		{`{"command":["/usr/bin/backup","--all"],"state":"finished","restarts":0,"failures":0,"last_exit":"exit status 7","exit_code":7}`,
			"job     /usr/bin/backup --all: finished, last exit status 7 (job mode once: it runs again when this node next leads)\n"},
		{`{"command":["/usr/bin/worker"],"state":"running","pid":42,"term":3,"restarts":2,"failures":2,"last_exit":"exit status 1","exit_code":1}`,
			"job     /usr/bin/worker: running (pid 42, term 3), last exit status 1, 2 restarts, 2 failures in the window\n"},
		{`{"command":[],"unit":"lanleader-job-db.service","state":"running","term":5,"restarts":0,"failures":0}`,
			"job     unit lanleader-job-db.service: running (term 5)\n"},
	} {
		var st agent.Status
		body := `{"name":"host-b","node_id":2,"priority":100,"state":"leader","term":5,"leader_id":2,"leader_name":"host-b","members":[],"job":` + tc.job + `}`
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		printStatus(&out, st)
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("status of %s:\n%s\nwant the line %q", tc.job, out.String(), tc.want)
		}
	}
}
