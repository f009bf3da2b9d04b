package detector

import (
	"fmt"
	"testing"
	"time"
)

func TestNoAllocations(t *testing.T) {
	dets := map[string]Detector{
		"Fixed": NewFixed(FixedConfig{Timeout: 300 * ms}),
		"Phi":   NewPhi(DefaultPhiConfig(100 * ms)),
	}
	for name, d := range dets {
		now := time.Duration(0)
		// Warm up past the window so eviction runs too.
		for range 300 {
			now += 100 * ms
			d.Observe(now)
		}
		var sink time.Duration
		if n := testing.AllocsPerRun(1000, func() {
			now += 97 * ms
			d.Observe(now)
		}); n != 0 {
			t.Errorf("%s.Observe: %v allocations per call", name, n)
		}
		if n := testing.AllocsPerRun(1000, func() {
			at, _ := d.SuspectAt()
			sink += at
		}); n != 0 {
			t.Errorf("%s.SuspectAt: %v allocations per call", name, n)
		}
		if n := testing.AllocsPerRun(1000, func() {
			if d.Suspect(now + 150*ms) {
				sink++
			}
		}); n != 0 {
			t.Errorf("%s.Suspect: %v allocations per call", name, n)
		}
		if n := testing.AllocsPerRun(1000, func() { d.Reset(); d.Observe(now) }); n != 0 {
			t.Errorf("%s.Reset: %v allocations per call", name, n)
		}
		_ = sink
	}
	p := NewPhi(DefaultPhiConfig(100 * ms))
	p.Observe(0)
	var f float64
	if n := testing.AllocsPerRun(1000, func() { f += p.Phi(150 * ms) }); n != 0 {
		t.Errorf("Phi.Phi: %v allocations per call", n)
	}
}

// benchArrivals is a jittered series, replayed by the benchmarks with a
// growing offset so that time keeps going forward.
var benchArrivals = arrivalSeries(4096, 100*ms, 20*ms, normalJitter, 7)

func benchObserveSuspectAt(b *testing.B, d Detector) {
	span := benchArrivals[len(benchArrivals)-1] + 100*ms
	var off, sink time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(benchArrivals) {
			i = 0
			off += span
		}
		d.Observe(off + benchArrivals[i])
		at, _ := d.SuspectAt()
		sink += at
		i++
	}
	_ = sink
}

func BenchmarkFixedObserveSuspectAt(b *testing.B) {
	benchObserveSuspectAt(b, NewFixed(FixedConfig{Timeout: 300 * ms}))
}

func BenchmarkPhiObserveSuspectAt(b *testing.B) {
	for _, w := range []int{100, 1000} {
		b.Run(fmt.Sprintf("window=%d", w), func(b *testing.B) {
			cfg := DefaultPhiConfig(100 * ms)
			cfg.WindowSize = w
			benchObserveSuspectAt(b, NewPhi(cfg))
		})
	}
}

func BenchmarkPhiSuspect(b *testing.B) {
	p := NewPhi(DefaultPhiConfig(100 * ms))
	observeAll(p, benchArrivals)
	last := benchArrivals[len(benchArrivals)-1]
	n := 0
	for b.Loop() {
		if p.Suspect(last + 200*ms) {
			n++
		}
	}
	_ = n
}

func BenchmarkPhiPhi(b *testing.B) {
	p := NewPhi(DefaultPhiConfig(100 * ms))
	observeAll(p, benchArrivals)
	last := benchArrivals[len(benchArrivals)-1]
	var f float64
	for b.Loop() {
		f += p.Phi(last + 200*ms)
	}
	_ = f
}
