package proc

import (
	"testing"
	"time"
)

// TestSetLimits: new limits apply to what the supervisor decides next
// (a hand-over after MaxFailures) and to the next guard's grace.
func TestSetLimits(t *testing.T) {
	s := New(Config{Argv: []string{"true"}, Grace: time.Second, MaxFailures: 3, FailureWindow: time.Minute})
	one := []time.Time{time.Now()}
	if s.tooMany(one) {
		t.Fatal("one failure of 3 allowed is too many")
	}
	s.SetLimits(Limits{Grace: 5 * time.Second, MaxFailures: 1, FailureWindow: time.Hour})
	if !s.tooMany(one) {
		t.Error("after SetLimits(MaxFailures 1) one failure is not too many")
	}
	cmd := s.guardCommand("/bin/true", Want{Run: true, Gen: 1, Term: 2})
	found := false
	for _, e := range cmd.Env {
		found = found || e == guardGraceEnv+"=5s"
	}
	if !found {
		t.Errorf("the guard's environment lacks the new grace %s=5s", guardGraceEnv)
	}
}
