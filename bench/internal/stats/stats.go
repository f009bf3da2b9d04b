// Package stats is the order statistics the benchmarks print.
package stats

import (
	"slices"
	"time"
)

// Summary is the order statistics of a set of samples.
type Summary struct {
	N                          int
	Min, Median, P90, P99, Max time.Duration
}

// Summarize sorts a copy of xs and returns its order statistics; the zero
// summary for no samples.
//
// Median is the middle sample of an odd count and the mean of the two
// middle samples of an even count (rounded down to the nanosecond).
//
// P90 and P99 are the nearest-rank 90th and 99th percentiles: the sample of rank
// ceil(0.90 × n) (1-based) in ascending order, so always an observed
// value (P99 likewise: for n = 30 it is the largest). For n = 20 it is the 18th smallest sample; for n = 1 the only
// one; for n ≤ 10 the largest.
func Summarize(xs []time.Duration) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = s[n/2-1] + (s[n/2]-s[n/2-1])/2
	}
	return Summary{N: n, Min: s[0], Median: med, P90: percentile(s, 90), P99: percentile(s, 99), Max: s[n-1]}
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted,
// which must not be empty: the element of 1-based rank ceil(p/100 × n).
// The rank is computed in integers so that no rounding error moves it.
func percentile(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	rank := (p*n + 99) / 100 // ceil(p×n/100)
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}
