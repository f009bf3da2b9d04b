package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultStatus is the fault's part of a host's /status.
type faultStatus struct {
	State      string   `json:"state"`
	Fault      []string `json:"fault"`
	TrackFiles []struct {
		Path    string `json:"path"`
		Present bool   `json:"present"`
	} `json:"track_files"`
}

func (j *jobLAN) faultStatus(i int) (faultStatus, error) {
	var s faultStatus
	body, err := j.Get(i, "http://127.0.0.1:9947/status")
	if err == nil {
		err = json.Unmarshal([]byte(body), &s)
	}
	return s, err
}

// TestDrainWithTrackFile: the drain procedure of docs/job.md on three
// hosts, each with --track-file DIR/maint-N/drain (the directory missing at
// first: an absent file). The file touched on the leader (host-3, the
// largest key, preemption on): it resigns, host-2 leads and runs the job;
// host-3, even restarted while drained, follows host-2 and never leads,
// although it has the largest key; the file removed: host-3 takes the
// leadership back (preemption). The job's stamps never overlap.
func TestDrainWithTrackFile(t *testing.T) {
	j := startJobLAN(t, 3, jobStampScript, true, func(dir string, i int) []string {
		return []string{"--track-file", filepath.Join(dir, fmt.Sprintf("maint-%d", i+1), "drain")}
	})
	j.waitJob(2, j.obs.Start, startBound)
	drain := filepath.Join(j.dir, "maint-3", "drain")
	if err := os.Mkdir(filepath.Dir(drain), 0o755); err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	if err := os.WriteFile(drain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Stat'ed every second: the hand-over within that and a failover.
	moved := j.waitJob(1, t0, failoverBound+2*time.Second)
	t.Logf("touch of the track file on the leader → the job started on host-2 %v later", moved.at.Sub(t0).Round(time.Millisecond))
	waitFor(t, "every host follows host-2", failoverBound, func() (bool, string) { return j.obs.Agree(moved.at, 2, j.all()...) })
	st, err := j.faultStatus(2)
	if err != nil || len(st.Fault) != 1 || !strings.Contains(st.Fault[0], "a track file is present ("+drain+")") ||
		len(st.TrackFiles) != 1 || !st.TrackFiles[0].Present {
		t.Errorf("host-3's status while drained: %+v %v", st, err)
	}

	// A restart while drained: host-3 starts in fault and follows.
	if err := j.procs[2].Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := j.procs[2].Wait(10 * time.Second); err != nil || code != 0 {
		t.Fatalf("host-3 after SIGTERM: exit %d, %v", code, err)
	}
	restarted := time.Now()
	j.procs[2] = j.start(2)
	waitFor(t, "the restarted host-3 follows host-2", startBound, func() (bool, string) { return j.obs.Agree(restarted, 2, j.all()...) })
	if !strings.Contains(j.procs[2].Log(), "a track file is present") {
		t.Errorf("host-3's log does not say it started in fault")
	}

	t1 := time.Now()
	if err := os.Remove(drain); err != nil {
		t.Fatal(err)
	}
	back := j.waitJob(2, t1, failoverBound+2*time.Second)
	t.Logf("rm of the track file → the job started on host-3 again %v later", back.at.Sub(t1).Round(time.Millisecond))

	// Between the hand-over and the rm host-3 never led, nor ran the job.
	for _, s := range j.obs.Events() {
		if s.Host == 2 && s.State == "leader" && s.At.After(moved.at) && s.At.Before(t1) {
			t.Errorf("host-3 led while drained: %v", s)
		}
	}
	stamps := readJobStamps(t, j.stamps)
	if i := slices.IndexFunc(stamps, func(s jobStamp) bool { return s.start && s.node == 3 && s.at.After(t0) && s.at.Before(t1) }); i >= 0 {
		t.Errorf("host-3's job started while drained: %+v", stamps[i])
	}
	if ov := jobOverlaps(stamps); len(ov) > 0 {
		t.Errorf("the job ran on two hosts at once: %q", ov)
	}
}
