package sim

import (
	"flag"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lanleader/lanleader/election"
)

var (
	flagSeed      = flag.Uint64("sim.seed", 0, "run only this schedule seed (with its trace on failure)")
	flagSchedules = flag.Int("sim.schedules", 0, "number of random schedules per algorithm (default 5000, or $LANLEADER_SIM_SCHEDULES)")
)

// schedules returns how many random schedules to run: -sim.schedules, else
// $LANLEADER_SIM_SCHEDULES (the long sweep), else 5000.
func schedules(t *testing.T) int {
	if *flagSchedules > 0 {
		return *flagSchedules
	}
	if v := os.Getenv("LANLEADER_SIM_SCHEDULES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("LANLEADER_SIM_SCHEDULES=%q: want a positive number", v)
		}
		return n
	}
	if testing.Short() {
		return 500
	}
	return 5000
}

// TestRandomSchedules plays the random fault schedules for every
// algorithm (each on its own core when there are several): the same
// clusters and faults, the same invariants.
func TestRandomSchedules(t *testing.T) {
	for _, alg := range election.Algorithms {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			randomSchedules(t, alg)
		})
	}
}

func randomSchedules(t *testing.T, alg string) {
	n := schedules(t)
	first := uint64(1)
	if *flagSeed != 0 {
		first, n = *flagSeed, 1
	}
	start := time.Now()
	var reliable, dupTerms, failed, overlapRuns, noticesSent, noticesActed int
	var overlapMax time.Duration
	var worst time.Duration
	var worstSeed uint64
	for seed := first; seed < first+uint64(n); seed++ {
		sch := GenerateFor(alg, seed)
		res := Run(sch, nil)
		if sch.Reliable {
			reliable++
		}
		dupTerms += res.DupTerms
		noticesSent += res.NoticesSent
		noticesActed += res.NoticesActed
		if res.JobOverlaps > 0 {
			overlapRuns++
			overlapMax = max(overlapMax, res.JobOverlapMax)
		}
		if res.Converge > worst {
			worst, worstSeed = res.Converge, seed
		}
		if res.Failed() {
			failed++
			if failed <= 5 {
				t.Errorf("seed %d broke an invariant:\n%s%v\nreplay: %s", seed, sch.Describe(), res.Violations, res.Replay())
			}
		}
	}
	t.Logf("%s: %d schedules (%d reliable) in %v: %d failed; %d same-term leaderships outside reliable schedules; slowest convergence %v after the last fault (seed %d); %d ran two jobs at once (default mode allows it across a cut or a crash), the longest %v; %d crashed leaders' NOTICEs sent, %d deliveries acted on",
		alg, n, reliable, time.Since(start).Round(time.Millisecond), failed, dupTerms, worst, worstSeed, overlapRuns, overlapMax, noticesSent, noticesActed)
	checkNoticesDrawn(t, n, noticesSent, noticesActed)
}

// checkNoticesDrawn fails a sweep of n schedules (from 200) in which no
// crashed leader's NOTICE was sent, or none acted on.
func checkNoticesDrawn(t *testing.T, n, sent, acted int) {
	t.Helper()
	if n >= 200 && (sent == 0 || acted == 0) {
		t.Errorf("%d schedules: %d NOTICEs sent, %d acted on; want the crashes with notice drawn and their notices heard", n, sent, acted)
	}
}
