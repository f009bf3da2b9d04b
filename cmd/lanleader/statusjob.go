package main

import (
	"fmt"
	"strings"

	"github.com/lanleader/lanleader/agent"
)

// jobText is the job's line of `lanleader status`: its command or unit,
// its state and how it last ended, e.g. "/usr/bin/worker: finished, exit
// status 7 (job mode once: it runs again when this node next leads)".
func jobText(j *agent.JobStatus) string {
	what := cell(strings.Join(j.Command, " "))
	if j.Unit != "" {
		what = "unit " + cell(j.Unit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", what, cell(j.State))
	switch {
	case j.State == "running" && j.Pid > 0:
		fmt.Fprintf(&b, " (pid %d, term %d)", j.Pid, j.Term)
	case j.State == "running":
		fmt.Fprintf(&b, " (term %d)", j.Term)
	}
	if j.LastExit != "" {
		fmt.Fprintf(&b, ", last %s", cell(j.LastExit))
	}
	if j.State == "finished" {
		b.WriteString(" (job mode once: it runs again when this node next leads)")
	}
	if j.Restarts > 0 || j.Failures > 0 {
		fmt.Fprintf(&b, ", %d restarts, %d failures in the window", j.Restarts, j.Failures)
	}
	return b.String()
}
