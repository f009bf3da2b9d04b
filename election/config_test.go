package election

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/detector"
)

// Each invalid field gives exactly one error, and the error names the
// field.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // the start of the only error
	}{
		// A zero duration is invalid for Validate, but NewBully fills it
		// with its default first (checked below).
		{"id zero", func(c *Config) { c.ID = 0 }, "node id: must not be 0"},
		{"heartbeat interval zero", func(c *Config) { c.HeartbeatInterval = 0 }, "heartbeat interval: must be positive, got 0s"},
		{"heartbeat interval negative", func(c *Config) { c.HeartbeatInterval = -ms }, "heartbeat interval: must be positive, got -1ms"},
		{"answer timeout zero", func(c *Config) { c.AnswerTimeout = 0 }, "answer timeout: must be positive"},
		{"coordinator timeout zero", func(c *Config) { c.CoordinatorTimeout = 0 }, "coordinator timeout: must be positive"},
		{"coordinator timeout below T", func(c *Config) { c.CoordinatorTimeout = 49 * ms }, "coordinator timeout (49ms): must be at least the answer timeout (50ms)"},
		{"startup wait zero", func(c *Config) { c.StartupWait = 0 }, "startup wait: must be positive"},
		{"resign hold-off zero", func(c *Config) { c.ResignHoldoff = 0 }, "resign hold-off: must be positive"},
		{"resign hold-off not above T", func(c *Config) { c.ResignHoldoff = 50 * ms }, "resign hold-off (50ms): must be longer than the answer timeout (50ms)"},
		{"preempt delay negative", func(c *Config) { c.PreemptDelay = -time.Second }, "preempt delay: must not be negative, got -1s"},
		{"suspect after zero", func(c *Config) { c.SuspectAfter = 0 }, "suspect after: must be positive"},
		{"suspect after equal to the heartbeat interval", func(c *Config) { c.SuspectAfter = 100 * ms }, "suspect after (100ms): must be longer than the heartbeat interval (100ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(1)
			tc.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming the field (%q)", tc.want)
			}
			var errs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Errorf("Validate() = %q, want exactly one error starting %q", err, tc.want)
			}
			_, err = NewBully(c)
			if filled := strings.Contains(tc.name, "zero") && tc.name != "id zero"; filled {
				if err != nil {
					t.Errorf("NewBully: err = %v, want nil (the zero duration is filled with its default)", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewBully: err = %v, want the same error", err)
			}
		})
	}
}

// Every fault is reported, not only the first.
func TestConfigValidateReportsAll(t *testing.T) {
	c := DefaultConfig(0)
	c.AnswerTimeout = -ms
	c.PreemptDelay = -ms
	err := c.Validate()
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) || len(j.Unwrap()) != 3 {
		t.Fatalf("Validate() = %q, want 3 errors (node id, answer timeout, preempt delay)", err)
	}
	for _, name := range []string{"node id", "answer timeout", "preempt delay"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("Validate() = %q: %q not named", err, name)
		}
	}
}

// With a Detector set, SuspectAfter is not used and not checked.
func TestConfigValidateDetectorReplacesSuspectAfter(t *testing.T) {
	c := DefaultConfig(1)
	c.SuspectAfter = 0
	c.Detector = detector.NewFixed(detector.FixedConfig{Timeout: 250 * ms})
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
	// and the machine uses it: the suspect timer is 250ms after the claim.
	b, err := NewBully(c)
	if err != nil {
		t.Fatal(err)
	}
	n := tnode{t: t, m: b, b: b}
	n.step(0, memberUp(key(5)))
	n.step(0, evStart)
	n.expect(10*ms, coord(5, 1), "cancel-timer startup", "follow leader=5 term=1", "set-timer suspect at 260ms")
}

// NewBully fills every zero duration from the others, as DefaultConfig
// does, and derives the hold-off from the preempt delay.
func TestNewBullyFillsDefaults(t *testing.T) {
	b, err := NewBully(Config{ID: 3, Priority: 100, HeartbeatInterval: 200 * ms, AnswerTimeout: 20 * ms, PreemptDelay: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Config()
	got := []time.Duration{c.SuspectAfter, c.CoordinatorTimeout, c.StartupWait, c.ResignHoldoff}
	want := []time.Duration{600 * ms, 80 * ms, 600 * ms, 5 * time.Second}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("filled [SuspectAfter CoordinatorTimeout StartupWait ResignHoldoff] = %v, want %v", got, want)
			break
		}
	}
	if st := b.Status(); st.State != StateStarting || st.Self != key(3) || st.Term != 0 || st.Leader != 0 {
		t.Errorf("new machine status %+v, want starting, self 100/3, term 0, no leader", st)
	}
	if acts := b.Step(0, memberUp(key(4))); len(acts) != 0 {
		t.Errorf("a machine that is not started acted: %q", actStrings(acts))
	}
}
