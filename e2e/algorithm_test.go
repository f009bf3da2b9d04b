//go:build linux

package e2e

import (
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

// TestScenarioAlgorithms: the ring family on 5 hosts, each under the
// scenarios that change the ring: the leader's crash, the return of the
// highest (preemption on), and a graceful stop. Same invariant and bounds
// as bully's scenarios.
func TestScenarioAlgorithms(t *testing.T) {
	for _, alg := range election.Algorithms[1:] {
		t.Run(alg, func(t *testing.T) {
			l := startLAN(t, 5, "--algorithm", alg)
			if st, _, err := l.obs.Status(0); err != nil || st.Algorithm != alg {
				t.Fatalf("host-1's /status: algorithm %q (%v), want %q", st.Algorithm, err, alg)
			}
			t0 := l.kill(4)
			l.waitAgree("host-1..4 agree on host-4 after host-5's crash", failoverBound, t0, 4, l.but(4)...)
			l.report(alg+": SIGKILL of the leader", t0, 4, l.but(4)...)

			t1 := time.Now()
			l.procs[4] = l.start(4)
			l.waitAgree("host-5 is back and leads", rejoinBound, t1, 5, l.All()...)
			l.report(alg+": restart of host-5", t1, 5, l.but(4)...)

			t2 := l.term(4)
			l.waitAgree("host-1..4 agree on host-4 after host-5's SIGTERM", failoverBound, t2, 4, l.but(4)...)
			l.report(alg+": SIGTERM of the leader", t2, 4, l.but(4)...)
		})
	}
}
