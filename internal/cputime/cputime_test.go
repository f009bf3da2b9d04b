package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Burning CPU shows in Self (on unix), and it never goes back.
func TestSelfGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("not measured on", runtime.GOOS)
	}
	before := Self()
	x := 0
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	after := Self()
	if after <= before || after-before < 10*time.Millisecond {
		t.Fatalf("CPU time %v → %v after 50 ms of work (%d loops)", before, after, x)
	}
}
