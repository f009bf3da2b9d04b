//go:build !unix

// Package cputime reads the CPU time this process has used, for the
// benchmarks and sweeps that report it beside wall time.
package cputime

import "time"

// Self is not measured here: 0.
func Self() time.Duration { return 0 }
