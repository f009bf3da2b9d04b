package detector

import (
	"strings"
	"testing"
	"time"
)

func TestFixedDetectionTimeEqualsTimeout(t *testing.T) {
	tests := []struct {
		name     string
		timeout  time.Duration
		arrivals []time.Duration
	}{
		{"one arrival", 300 * time.Millisecond, []time.Duration{0}},
		{"steady 100ms", 300 * time.Millisecond, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}},
		{"irregular", 250 * time.Millisecond, []time.Duration{5, 17 * time.Millisecond, 170 * time.Millisecond, 171 * time.Millisecond}},
		{"1ns timeout", 1, []time.Duration{1000, 2000}},
		{"negative clock", time.Second, []time.Duration{-5 * time.Second, -4 * time.Second}},
		{"equal arrivals", 10 * time.Millisecond, []time.Duration{7, 7, 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFixed(FixedConfig{Timeout: tc.timeout})
			for _, a := range tc.arrivals {
				f.Observe(a)
				at, ok := f.SuspectAt()
				if !ok {
					t.Fatalf("after Observe(%v): ok = false", a)
				}
				if got := at - a; got != tc.timeout {
					t.Fatalf("after Observe(%v): SuspectAt - last = %v, want %v", a, got, tc.timeout)
				}
				if f.Suspect(at - 1) {
					t.Errorf("Suspect(SuspectAt-1ns) = true")
				}
				if !f.Suspect(at) {
					t.Errorf("Suspect(SuspectAt) = false")
				}
			}
		})
	}
}

func TestFixedBeforeFirstObserveAndReset(t *testing.T) {
	f := NewFixed(FixedConfig{Timeout: time.Second})
	check := func(stage string) {
		t.Helper()
		if at, ok := f.SuspectAt(); ok || at != 0 {
			t.Errorf("%s: SuspectAt() = %v, %v; want 0, false", stage, at, ok)
		}
		if f.Suspect(maxDuration) {
			t.Errorf("%s: Suspect(max) = true with nothing observed", stage)
		}
	}
	check("new")
	f.Observe(10 * time.Second)
	if !f.Suspect(11 * time.Second) {
		t.Fatal("not suspected one timeout after the only arrival")
	}
	f.Reset()
	check("after Reset")
	// After Reset an arrival earlier than the forgotten one is accepted.
	f.Observe(time.Second)
	if at, ok := f.SuspectAt(); !ok || at != 2*time.Second {
		t.Errorf("after Reset and Observe(1s): SuspectAt() = %v, %v; want 2s, true", at, ok)
	}
}

func TestFixedIgnoresOutOfOrder(t *testing.T) {
	f := NewFixed(FixedConfig{Timeout: 300 * time.Millisecond})
	f.Observe(time.Second)
	f.Observe(900 * time.Millisecond) // earlier: ignored
	if at, _ := f.SuspectAt(); at != 1300*time.Millisecond {
		t.Fatalf("SuspectAt() = %v after an out-of-order arrival, want 1.3s", at)
	}
	f.Observe(time.Second) // equal: recorded, same answer
	f.Observe(1100 * time.Millisecond)
	if at, _ := f.SuspectAt(); at != 1400*time.Millisecond {
		t.Fatalf("SuspectAt() = %v, want 1.4s", at)
	}
}

func TestFixedSaturates(t *testing.T) {
	f := NewFixed(FixedConfig{Timeout: time.Hour})
	f.Observe(maxDuration - time.Second)
	if at, ok := f.SuspectAt(); !ok || at != maxDuration {
		t.Fatalf("SuspectAt() = %v, %v; want saturation at %v", at, ok, maxDuration)
	}
}

func TestFixedConfigValidate(t *testing.T) {
	for _, timeout := range []time.Duration{0, -1, -time.Second} {
		err := FixedConfig{Timeout: timeout}.Validate()
		if err == nil || !strings.Contains(err.Error(), "Timeout") {
			t.Errorf("Validate(Timeout=%v) = %v, want an error naming Timeout", timeout, err)
		}
	}
	if err := (FixedConfig{Timeout: 1}).Validate(); err != nil {
		t.Errorf("Validate(Timeout=1ns) = %v, want nil", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewFixed with an invalid config did not panic")
		}
	}()
	NewFixed(FixedConfig{})
}
