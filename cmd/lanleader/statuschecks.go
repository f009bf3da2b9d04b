package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/lanleader/lanleader/agent"
)

// printChecks writes the header's lines of the health checks, the track
// files and the fault: one line each.
func printChecks(tw io.Writer, st agent.Status) {
	for _, c := range st.Checks {
		fmt.Fprintf(tw, "check\t%s\n", checkText(c))
	}
	for _, f := range st.TrackFiles {
		state := "absent"
		if f.Present {
			state = "present"
		}
		fmt.Fprintf(tw, "track file\t%s: %s\n", cell(f.Path), state)
	}
	if len(st.Fault) > 0 {
		fmt.Fprintf(tw, "fault\t%s: this node takes no part in elections\n", cell(strings.Join(st.Fault, "; ")))
	}
}

// checkText is one check: "db: failed (fault, 1 of 2 passes to rise): exit status 1".
func checkText(c agent.CheckStatus) string {
	cost := fmt.Sprintf("weight %d", c.Weight)
	if c.Fault {
		cost = "fault"
	}
	progress := fmt.Sprintf("%d of %d failures to fall", c.Failures, c.Fall)
	if !c.OK {
		progress = fmt.Sprintf("%d of %d passes to rise", c.Passes, c.Rise)
	}
	s := fmt.Sprintf("%s: %s (%s, %s)", cell(c.Name), cell(c.State), cost, progress)
	if c.Detail != "" {
		s += ": " + cell(c.Detail)
	}
	return s
}
