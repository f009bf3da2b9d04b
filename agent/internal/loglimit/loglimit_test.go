package loglimit

import (
	"strconv"
	"testing"
	"time"
)

// A key's line goes through once per period, the next one with the count
// of those held back; another key has its own period.
func TestAllow(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := New(time.Minute)
	l.Now = func() time.Time { return now }
	steps := []struct {
		key  string
		step time.Duration // the clock moves by it before the line
		ok   bool
		held int
	}{
		{"a", 0, true, 0},
		{"a", time.Second, false, 0},
		{"b", 0, true, 0}, // another key: at once
		{"a", 58 * time.Second, false, 0},
		{"a", time.Second - 1, false, 0}, // a nanosecond short of the period
		{"a", 1, true, 3},                // the period: with the three held back
		{"a", time.Second, false, 0},
		{"b", 0, true, 0}, // b's period has passed: nothing held back
		{"a", time.Minute, true, 1},
	}
	for i, s := range steps {
		now = now.Add(s.step)
		if ok, held := l.Allow(s.key); ok != s.ok || held != s.held {
			t.Fatalf("step %d (%s): Allow = %v, %d; want %v, %d", i, s.key, ok, held, s.ok, s.held)
		}
	}
}

// The keys are bounded: at the bound, those whose period has passed are
// forgotten; with none such, a new key's lines go through unlimited and
// are not remembered.
func TestAllowBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := New(time.Minute)
	l.Now = func() time.Time { return now }
	for i := range maxKeys {
		if ok, _ := l.Allow(strconv.Itoa(i)); !ok {
			t.Fatalf("key %d: held back at its first line", i)
		}
	}
	for range 3 {
		if ok, _ := l.Allow("new"); !ok {
			t.Fatal("a new key beyond the bound was held back")
		}
	}
	if n := len(l.keys); n != maxKeys {
		t.Fatalf("%d keys remembered, want the bound %d", n, maxKeys)
	}
	if ok, _ := l.Allow("0"); ok {
		t.Fatal("a remembered key's repeat went through within its period")
	}
	now = now.Add(time.Minute)
	if ok, _ := l.Allow("new"); !ok {
		t.Fatal("a new key, once the others' periods passed, was held back")
	}
	if n := len(l.keys); n != 1 {
		t.Fatalf("%d keys remembered after the expired ones were forgotten, want 1", n)
	}
	if ok, _ := l.Allow("new"); ok {
		t.Fatal("the new key, now remembered, was let through twice in its period")
	}
}
