package stats

import (
	"testing"
	"time"
)

func msd(vs ...int) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestSummarize(t *testing.T) {
	const m = time.Millisecond
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"single", msd(7), Summary{N: 1, Min: 7 * m, Median: 7 * m, P90: 7 * m, P99: 7 * m, Max: 7 * m}},
		// Unsorted input; odd count: the middle one.
		{"odd", msd(50, 10, 40, 20, 30), Summary{N: 5, Min: 10 * m, Median: 30 * m, P90: 50 * m, P99: 50 * m, Max: 50 * m}},
		// Even count: the mean of the two middle ones.
		{"even", msd(40, 10, 30, 20), Summary{N: 4, Min: 10 * m, Median: 25 * m, P90: 40 * m, P99: 40 * m, Max: 40 * m}},
		// Even count whose middle mean is not a whole millisecond.
		{"even-half", msd(1, 2), Summary{N: 2, Min: 1 * m, Median: 1500 * time.Microsecond, P90: 2 * m, P99: 2 * m, Max: 2 * m}},
		// 20 samples 1..20 ms: rank ceil(0.9×20) = 18 → 18 ms; median (10+11)/2.
		{"twenty", msd(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1),
			Summary{N: 20, Min: 1 * m, Median: 10500 * time.Microsecond, P90: 18 * m, P99: 20 * m, Max: 20 * m}},
		// 11 samples: rank ceil(9.9) = 10 → the 10th smallest.
		{"eleven", msd(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100),
			Summary{N: 11, Min: 1 * m, Median: 6 * m, P90: 10 * m, P99: 100 * m, Max: 100 * m}},
		// 10 samples: rank ceil(9) = 9 exactly (no float rounding up to 10).
		{"ten", msd(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
			Summary{N: 10, Min: 1 * m, Median: 5500 * time.Microsecond, P90: 9 * m, P99: 10 * m, Max: 10 * m}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tc.in...)
			if got := Summarize(tc.in); got != tc.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.in[i] {
					t.Fatalf("summarize changed its input: %v, was %v", tc.in, in)
				}
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	s := msd(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
	for _, tc := range []struct {
		p    int
		want time.Duration
	}{{1, 1}, {5, 1}, {6, 2}, {50, 10}, {51, 11}, {90, 18}, {95, 19}, {96, 20}, {100, 20}} {
		if got := percentile(s, tc.p); got != tc.want*time.Millisecond {
			t.Errorf("p%d of 1..20 ms = %v, want %v", tc.p, got, tc.want*time.Millisecond)
		}
	}
}

// TestP99 distinguishes P99 from Max: with 200 samples, rank ceil(0.99 ×
// 200) = 198.
func TestP99(t *testing.T) {
	xs := make([]time.Duration, 200)
	for i := range xs {
		xs[i] = time.Duration(200-i) * time.Millisecond
	}
	s := Summarize(xs)
	if s.P99 != 198*time.Millisecond || s.Max != 200*time.Millisecond || s.P90 != 180*time.Millisecond {
		t.Errorf("Summarize(1..200 ms) = %+v, want P90 180ms, P99 198ms, Max 200ms", s)
	}
}
