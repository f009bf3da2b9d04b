package detector

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// testPhiConfig is DefaultPhiConfig(100ms) with a small MinStdDev, so that
// the measured spread, not the floor, decides where it should.
func testPhiConfig() PhiConfig {
	c := DefaultPhiConfig(100 * ms)
	c.MinStdDev = time.Microsecond
	return c
}

// TestPhiSuspectAtMatchesOracle compares SuspectAt with a brute-force scan
// of the oracle φ at 1µs steps over statistics computed independently from
// the arrival series. Tolerance: the scan's step (the true crossing lies in
// (scan-1µs, scan]) plus 1ns for rounding.
func TestPhiSuspectAtMatchesOracle(t *testing.T) {
	withCfg := func(f func(*PhiConfig)) PhiConfig {
		c := testPhiConfig()
		f(&c)
		return c
	}
	tests := []struct {
		name     string
		cfg      PhiConfig
		arrivals []time.Duration
	}{
		{"steady 100ms, default config (MinStdDev floor)", DefaultPhiConfig(100 * ms), steadySeries(500, time.Second, 100*ms)},
		{"steady 100ms, Akka floor interval/10", withCfg(func(c *PhiConfig) { c.MinStdDev = 10 * ms }), steadySeries(500, time.Second, 100*ms)},
		{"steady 100ms, two arrivals (bootstrap + 1)", testPhiConfig(), steadySeries(2, time.Second, 100*ms)},
		{"steady 100ms, window half full", testPhiConfig(), steadySeries(50, time.Second, 100*ms)},
		{"normal jitter 10ms", testPhiConfig(), arrivalSeries(500, 100*ms, 10*ms, normalJitter, 1)},
		{"uniform jitter 30ms, window 50, threshold 3", withCfg(func(c *PhiConfig) { c.WindowSize = 50; c.Threshold = 3 }), arrivalSeries(300, 100*ms, 30*ms, uniformJitter, 2)},
		{"threshold 1", withCfg(func(c *PhiConfig) { c.Threshold = 1 }), arrivalSeries(300, 100*ms, 10*ms, normalJitter, 3)},
		{"threshold 0.2 (crossing before the mean)", withCfg(func(c *PhiConfig) { c.Threshold = 0.2 }), arrivalSeries(300, 100*ms, 10*ms, normalJitter, 4)},
		{"threshold 16", withCfg(func(c *PhiConfig) { c.Threshold = 16 }), arrivalSeries(300, 100*ms, 10*ms, normalJitter, 5)},
		{"acceptable pause 250ms", withCfg(func(c *PhiConfig) { c.AcceptablePause = 250 * ms }), arrivalSeries(300, 100*ms, 10*ms, normalJitter, 6)},
		{"window 2", withCfg(func(c *PhiConfig) { c.WindowSize = 2 }), arrivalSeries(30, 100*ms, 10*ms, normalJitter, 7)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPhi(tc.cfg)
			observeAll(p, tc.arrivals)
			last := tc.arrivals[len(tc.arrivals)-1]
			got := relSuspect(p, last)

			mean, std := oracleParams(tc.cfg, oracleWindow(tc.cfg, tc.arrivals))
			want := scanSuspect(mean, std, tc.cfg.Threshold, time.Microsecond)
			if got <= want-time.Microsecond-1 || got > want+1 {
				t.Fatalf("SuspectAt - last = %v, oracle scan %v (mean %v, std %v): want within (scan-1µs, scan]",
					got, want, time.Duration(mean), time.Duration(std))
			}
			// Phi agrees with the oracle formula on the way.
			for _, dt := range []time.Duration{0, 50 * ms, time.Duration(mean), got - 1, got, 2 * got, 10 * time.Second} {
				g, w := p.Phi(last+dt), oraclePhi(float64(dt), mean, std)
				if math.IsInf(g, 0) || math.IsNaN(g) {
					t.Errorf("Phi(last+%v) = %v, want finite", dt, g)
				}
				if w > 250 { // beyond the literal formula's precision
					continue
				}
				if math.Abs(g-w) > 1e-8*math.Max(1, w) {
					t.Errorf("Phi(last+%v) = %v, oracle %v", dt, g, w)
				}
			}
		})
	}
}

// TestPhiSteadyAnalytic pins the steady 100ms case with the default config
// to the number worked out by hand: mean 100ms, std floored at 25ms, and
// φ = 8 at y ≈ 5.2254 (root of 0.070566y³ + 1.5976y = ln(1e8 - 1)), i.e.
// SuspectAt - last ≈ 230.6ms.
func TestPhiSteadyAnalytic(t *testing.T) {
	p := NewPhi(DefaultPhiConfig(100 * ms))
	arr := steadySeries(300, 0, 100*ms)
	observeAll(p, arr)
	got := relSuspect(p, arr[len(arr)-1])
	if got < 230*ms || got > 231*ms {
		t.Fatalf("SuspectAt - last = %v, want ≈ 230.6ms", got)
	}
}

func TestPhiMonotoneInNow(t *testing.T) {
	cases := []struct {
		cfg      PhiConfig
		arrivals []time.Duration
	}{
		{DefaultPhiConfig(100 * ms), steadySeries(200, 0, 100*ms)},
		{testPhiConfig(), arrivalSeries(200, 100*ms, 20*ms, normalJitter, 11)},
		{func() PhiConfig { c := testPhiConfig(); c.Threshold = 0.1; return c }(), arrivalSeries(200, 100*ms, 5*ms, uniformJitter, 12)},
	}
	for i, tc := range cases {
		p := NewPhi(tc.cfg)
		observeAll(p, tc.arrivals)
		last := tc.arrivals[len(tc.arrivals)-1]
		s, _ := p.SuspectAt()
		if s-last > 10*time.Second {
			t.Fatalf("case %d: SuspectAt - last = %v, implausible for 100ms heartbeats", i, s-last)
		}
		prev := -1.0
		check := func(now time.Duration) {
			v := p.Phi(now)
			if math.IsNaN(v) || v < prev {
				t.Fatalf("case %d: Phi(last+%v) = %v after %v: not non-decreasing", i, now-last, v, prev)
			}
			prev = v
		}
		for now := last - ms; now < s-time.Microsecond; now += time.Microsecond {
			check(now)
		}
		for now := s - time.Microsecond; now <= s+time.Microsecond; now++ {
			check(now)
		}
		for now := s + time.Microsecond; now < s+time.Second; now += 10 * time.Microsecond {
			check(now)
		}
		for _, now := range []time.Duration{s + time.Hour, s + 1000*time.Hour, maxDuration} {
			check(now)
		}
		if math.IsInf(prev, 0) || prev < 1e20 {
			t.Errorf("case %d: Phi(max) = %v, want finite and huge", i, prev)
		}
	}
}

// TestPhiSuspectAgreesWithSuspectAt checks, over many random configurations
// and series, that Suspect switches exactly at SuspectAt and that Phi
// crosses Threshold exactly there, as computed by the oracle φ too.
func TestPhiSuspectAgreesWithSuspectAt(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 43))
	logUniform := func(lo, hi float64) float64 {
		return math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
	}
	for i := range 300 {
		interval := time.Duration(logUniform(float64(ms), float64(2*time.Second)))
		cfg := PhiConfig{
			Threshold:       logUniform(0.01, 40),
			WindowSize:      2 + r.IntN(300),
			MinStdDev:       time.Duration(logUniform(1e3, 1e8)),
			FirstInterval:   time.Duration(logUniform(float64(ms), float64(2*time.Second))),
			AcceptablePause: time.Duration(r.Float64() * float64(time.Second)),
		}
		if r.IntN(4) == 0 {
			cfg.AcceptablePause = 0
		}
		arr := arrivalSeries(1+r.IntN(400), interval, time.Duration(r.Float64()*0.4*float64(interval)), jitterKind(r.IntN(2)), uint64(i))
		p := NewPhi(cfg)
		observeAll(p, arr)
		last := arr[len(arr)-1]
		s, ok := p.SuspectAt()
		if !ok || s < last {
			t.Fatalf("%d: SuspectAt() = %v, %v before last arrival %v", i, s, ok, last)
		}
		if !p.Suspect(s) || p.Suspect(s-1) {
			t.Fatalf("%d: Suspect(SuspectAt-1ns), Suspect(SuspectAt) = %v, %v; want false, true", i, p.Suspect(s-1), p.Suspect(s))
		}
		if p.Phi(s) < cfg.Threshold {
			t.Fatalf("%d: Phi(SuspectAt) = %v < Threshold %v", i, p.Phi(s), cfg.Threshold)
		}
		if s > last && p.Phi(s-1) >= cfg.Threshold {
			t.Fatalf("%d: Phi(SuspectAt-1ns) = %v >= Threshold %v", i, p.Phi(s-1), cfg.Threshold)
		}
		mean, std := oracleParams(cfg, oracleWindow(cfg, arr))
		const eps = 1e-9
		if o := oraclePhi(float64(s-last), mean, std); o < cfg.Threshold*(1-eps) {
			t.Fatalf("%d: oracle φ(SuspectAt) = %v < Threshold %v", i, o, cfg.Threshold)
		}
		if s > last {
			if o := oraclePhi(float64(s-last-1), mean, std); o > cfg.Threshold*(1+eps) {
				t.Fatalf("%d: oracle φ(SuspectAt-1ns) = %v > Threshold %v", i, o, cfg.Threshold)
			}
		}
	}
}

// TestPhiTinyThresholdSuspectsAtOnce covers the solver's lower edge: when φ
// already exceeds Threshold right at the arrival, SuspectAt is the arrival.
func TestPhiTinyThresholdSuspectsAtOnce(t *testing.T) {
	for _, th := range []float64{1e-300, 1e-20, 1e-6} {
		cfg := DefaultPhiConfig(100 * ms)
		cfg.Threshold = th
		p := NewPhi(cfg)
		p.Observe(time.Second)
		if s, _ := p.SuspectAt(); s != time.Second {
			t.Errorf("Threshold %v: SuspectAt() = %v, want the arrival 1s (φ(0) = %v)", th, s, p.Phi(time.Second))
		}
	}
	// And a huge threshold still gives a finite, consistent answer.
	cfg := DefaultPhiConfig(100 * ms)
	cfg.Threshold = 1e6
	p := NewPhi(cfg)
	p.Observe(0)
	s, ok := p.SuspectAt()
	if !ok || s <= 0 || s == maxDuration || p.Suspect(s-1) || !p.Suspect(s) || p.Phi(s-1) >= cfg.Threshold {
		t.Errorf("Threshold 1e6: SuspectAt() = %v, %v; Phi(s-1) = %v", s, ok, p.Phi(s-1))
	}
}

func TestPhiBootstrapUsesFirstInterval(t *testing.T) {
	for _, fi := range []time.Duration{10 * ms, 100 * ms, time.Second} {
		cfg := testPhiConfig()
		cfg.FirstInterval = fi
		p := NewPhi(cfg)
		if _, ok := p.SuspectAt(); ok {
			t.Fatal("SuspectAt ok before any arrival")
		}
		if p.Suspect(maxDuration) || p.Phi(maxDuration) != 0 {
			t.Fatal("suspected before any arrival")
		}
		p.Observe(3 * time.Second)
		got := relSuspect(p, 3*time.Second)
		// One arrival: mean FirstInterval, std FirstInterval/4.
		want := scanSuspect(float64(fi), float64(fi)/4, cfg.Threshold, time.Microsecond)
		if got <= want-time.Microsecond-1 || got > want+1 {
			t.Errorf("FirstInterval %v: SuspectAt - arrival = %v, oracle %v", fi, got, want)
		}
	}
}

// TestPhiWindowEviction: after WindowSize new samples the old ones (and the
// bootstrap) no longer matter, and one sample before that they still do.
func TestPhiWindowEviction(t *testing.T) {
	cfg := testPhiConfig()
	cfg.WindowSize = 20
	w := cfg.WindowSize

	old := arrivalSeries(3*w, 100*ms, 10*ms, normalJitter, 21)
	newGaps := steadySeries(w+1, 0, 300*ms) // w gaps of 300ms
	a := NewPhi(cfg)
	observeAll(a, old)
	base := old[len(old)-1]
	for i, g := range newGaps[1:] {
		a.Observe(base + g)
		if i == w-2 { // w-1 new samples: one old one left
			b := NewPhi(cfg)
			observeAll(b, newGaps[:w])
			if relSuspect(a, base+g) == relSuspect(b, newGaps[w-1]) {
				t.Fatal("with one old sample left, the answer already equals the fresh detector's: the test cannot see eviction")
			}
		}
	}
	b := NewPhi(cfg)
	observeAll(b, newGaps)
	ra, rb := relSuspect(a, base+newGaps[w]), relSuspect(b, newGaps[w])
	if ra != rb {
		t.Fatalf("after %d new samples: SuspectAt - last = %v, fresh detector fed only the new samples %v", w, ra, rb)
	}
	// Steady 300ms with std floored at 1µs: just above the mean.
	if ra < 300*ms || ra > 301*ms {
		t.Fatalf("SuspectAt - last = %v, want just above 300ms", ra)
	}
}

// TestPhiAcceptablePauseShiftsByPause: AcceptablePause moves the mean, so
// SuspectAt moves by exactly the pause (±1ns of rounding).
func TestPhiAcceptablePauseShiftsByPause(t *testing.T) {
	series := map[string][]time.Duration{
		"steady":    steadySeries(300, 0, 100*ms),
		"jitter":    arrivalSeries(300, 100*ms, 20*ms, normalJitter, 31),
		"bootstrap": {5 * time.Second},
	}
	for name, arr := range series {
		for _, pause := range []time.Duration{1, 1 * ms, 100 * ms, 1500 * ms, time.Hour} {
			c0 := DefaultPhiConfig(100 * ms)
			cp := c0
			cp.AcceptablePause = pause
			p0, pp := NewPhi(c0), NewPhi(cp)
			observeAll(p0, arr)
			observeAll(pp, arr)
			last := arr[len(arr)-1]
			r0, rp := relSuspect(p0, last), relSuspect(pp, last)
			if d := rp - r0 - pause; d < -1 || d > 1 {
				t.Errorf("%s, pause %v: SuspectAt moved by %v, want %v ± 1ns", name, pause, rp-r0, pause)
			}
		}
	}
}

func TestPhiResetEqualsFresh(t *testing.T) {
	cfg := DefaultPhiConfig(100 * ms)
	p := NewPhi(cfg)
	observeAll(p, arrivalSeries(500, 100*ms, 30*ms, normalJitter, 41))
	p.Reset()
	if _, ok := p.SuspectAt(); ok || p.Suspect(maxDuration) || p.Phi(maxDuration) != 0 {
		t.Fatal("state left after Reset")
	}
	fresh := NewPhi(cfg)
	arr := arrivalSeries(7, 50*ms, 5*ms, normalJitter, 42) // starts at 10s, before the forgotten arrivals
	for _, a := range arr {
		p.Observe(a)
		fresh.Observe(a)
		s1, _ := p.SuspectAt()
		s2, _ := fresh.SuspectAt()
		if s1 != s2 {
			t.Fatalf("after Reset: SuspectAt() = %v, fresh detector %v", s1, s2)
		}
	}
}

func TestPhiIgnoresOutOfOrder(t *testing.T) {
	cfg := DefaultPhiConfig(100 * ms)
	arr := arrivalSeries(50, 100*ms, 10*ms, normalJitter, 51)
	a, b := NewPhi(cfg), NewPhi(cfg)
	for i, x := range arr {
		a.Observe(x)
		b.Observe(x)
		if i > 0 {
			before, _ := b.SuspectAt()
			b.Observe(arr[i-1]) // earlier: ignored
			b.Observe(x - 1)
			if after, _ := b.SuspectAt(); after != before {
				t.Fatalf("out-of-order arrival changed SuspectAt from %v to %v", before, after)
			}
		}
	}
	sa, _ := a.SuspectAt()
	sb, _ := b.SuspectAt()
	if sa != sb {
		t.Fatalf("SuspectAt() = %v with out-of-order arrivals, %v without", sb, sa)
	}
}

// TestPhiExtremeTimes: a gap longer than MaxInterval is capped, clocks may
// be negative, and SuspectAt saturates instead of overflowing.
func TestPhiExtremeTimes(t *testing.T) {
	cfg := DefaultPhiConfig(100 * ms)
	p := NewPhi(cfg)
	p.Observe(-maxDuration)
	p.Observe(maxDuration - time.Second) // a gap of almost 2^64 ns
	s, ok := p.SuspectAt()
	if !ok || s != maxDuration || !p.Suspect(maxDuration) || p.Suspect(maxDuration-time.Second) {
		t.Fatalf("SuspectAt() = %v, %v; want saturation at %v", s, ok, maxDuration)
	}
	// The capped gap is one sample of MaxInterval among the bootstrap.
	q := NewPhi(cfg)
	q.Observe(0)
	q.Observe(3 * time.Hour)
	mean, std := oracleParams(cfg, []time.Duration{75 * ms, 125 * ms, MaxInterval})
	got := relSuspect(q, 3*time.Hour)
	if o := oraclePhi(float64(got), mean, std); o < cfg.Threshold*(1-1e-9) || oraclePhi(float64(got-1), mean, std) > cfg.Threshold*(1+1e-9) {
		t.Fatalf("after a 3h gap: SuspectAt - last = %v, oracle φ there %v (MaxInterval not applied?)", got, o)
	}
	// Negative clocks work like positive ones.
	n, m := NewPhi(cfg), NewPhi(cfg)
	observeAll(n, steadySeries(10, -time.Hour, 100*ms))
	observeAll(m, steadySeries(10, time.Hour, 100*ms))
	if relSuspect(n, -time.Hour+900*ms) != relSuspect(m, time.Hour+900*ms) {
		t.Fatal("negative clock gives a different answer")
	}
}

// TestPhiDefaultToleratesOneLostHeartbeat documents the choice of
// MinStdDev = interval/4: on a quiet network one lost heartbeat does not
// cause a suspicion, two do.
func TestPhiDefaultToleratesOneLostHeartbeat(t *testing.T) {
	const interval = 100 * ms
	for lost := range 3 {
		p := NewPhi(DefaultPhiConfig(interval))
		arr := arrivalSeries(300, interval, 500*time.Microsecond, normalJitter, 61)
		observeAll(p, arr)
		next := arr[len(arr)-1] + time.Duration(lost+1)*interval
		if got, want := p.Suspect(next), lost >= 2; got != want {
			t.Errorf("%d lost heartbeats: Suspect at the next arrival = %v, want %v (SuspectAt - last = %v)",
				lost, got, want, relSuspect(p, arr[len(arr)-1]))
		}
	}
}

func TestDefaultPhiConfig(t *testing.T) {
	got := DefaultPhiConfig(100 * ms)
	want := PhiConfig{Threshold: 8, WindowSize: 100, MinStdDev: 25 * ms, AcceptablePause: 0, FirstInterval: 100 * ms}
	if got != want {
		t.Fatalf("DefaultPhiConfig(100ms) = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	for _, iv := range []time.Duration{0, -ms, MaxInterval + 1} {
		if DefaultPhiConfig(iv).Validate() == nil {
			t.Errorf("DefaultPhiConfig(%v).Validate() = nil, want an error", iv)
		}
	}
}

func TestPhiConfigValidate(t *testing.T) {
	mod := func(f func(*PhiConfig)) PhiConfig {
		c := DefaultPhiConfig(100 * ms)
		f(&c)
		return c
	}
	tests := []struct {
		cfg    PhiConfig
		fields []string // fields the error must name; none: valid
	}{
		{mod(func(c *PhiConfig) {}), nil},
		{mod(func(c *PhiConfig) { c.WindowSize = 2; c.MinStdDev = 1; c.FirstInterval = 1 }), nil},
		{mod(func(c *PhiConfig) { c.WindowSize = MaxWindowSize; c.FirstInterval = MaxInterval }), nil},
		{mod(func(c *PhiConfig) { c.Threshold = 0 }), []string{"Threshold"}},
		{mod(func(c *PhiConfig) { c.Threshold = -1 }), []string{"Threshold"}},
		{mod(func(c *PhiConfig) { c.Threshold = math.NaN() }), []string{"Threshold"}},
		{mod(func(c *PhiConfig) { c.Threshold = math.Inf(1) }), []string{"Threshold"}},
		{mod(func(c *PhiConfig) { c.WindowSize = 1 }), []string{"WindowSize"}},
		{mod(func(c *PhiConfig) { c.WindowSize = MaxWindowSize + 1 }), []string{"WindowSize"}},
		{mod(func(c *PhiConfig) { c.MinStdDev = 0 }), []string{"MinStdDev"}},
		{mod(func(c *PhiConfig) { c.AcceptablePause = -1 }), []string{"AcceptablePause"}},
		{mod(func(c *PhiConfig) { c.FirstInterval = 0 }), []string{"FirstInterval"}},
		{mod(func(c *PhiConfig) { c.FirstInterval = MaxInterval + 1 }), []string{"FirstInterval"}},
		{PhiConfig{}, []string{"Threshold", "WindowSize", "MinStdDev", "FirstInterval"}},
	}
	for i, tc := range tests {
		err := tc.cfg.Validate()
		if len(tc.fields) == 0 {
			if err != nil {
				t.Errorf("%d: Validate(%+v) = %v, want nil", i, tc.cfg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%d: Validate(%+v) = nil, want an error naming %v", i, tc.cfg, tc.fields)
			continue
		}
		for _, f := range tc.fields {
			if !strings.Contains(err.Error(), "PhiConfig."+f) {
				t.Errorf("%d: Validate(%+v) = %q, does not name %s", i, tc.cfg, err, f)
			}
		}
		if n := len(strings.Split(err.Error(), "\n")); n != len(tc.fields) {
			t.Errorf("%d: Validate(%+v) = %q: %d complaints, want %d", i, tc.cfg, err, n, len(tc.fields))
		}
	}
}

func TestNewPhiPanicsOnInvalidConfig(t *testing.T) {
	defer func() {
		r := recover()
		err, _ := r.(error)
		if err == nil || !strings.Contains(err.Error(), "PhiConfig.WindowSize") {
			t.Errorf("recovered %v, want the Validate error", r)
		}
	}()
	c := DefaultPhiConfig(100 * ms)
	c.WindowSize = 0
	NewPhi(c)
}

// The confirmed alarm's φ rings 1.5 intervals after the last heartbeat on
// a quiet network, as the fixed detector's default timeout; Akka's
// threshold 8 rings at 2.31.
func TestConfirmedPhiAlarmsAfterOneAndAHalfIntervals(t *testing.T) {
	for _, interval := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		for _, tc := range []struct {
			cfg  PhiConfig
			want float64
		}{{ConfirmedPhiConfig(interval), 1.5}, {DefaultPhiConfig(interval), 2.31}} {
			p := NewPhi(tc.cfg)
			at := time.Duration(0)
			for range 300 {
				p.Observe(at)
				at += interval
			}
			at -= interval
			s, _ := p.SuspectAt()
			got := float64(s-at) / float64(interval)
			if math.Abs(got-tc.want) > 0.01 {
				t.Errorf("interval %v, threshold %v: suspects %.3f intervals after the last heartbeat, want %.2f", interval, tc.cfg.Threshold, got, tc.want)
			}
		}
	}
	// Under 30 % loss (every gap of 1, 2 or 3 intervals in the proportions
	// of the loss) the learned spread puts the alarm near 3 intervals.
	p := NewPhi(ConfirmedPhiConfig(100 * time.Millisecond))
	at := time.Duration(0)
	gaps := []int{1, 1, 2, 1, 1, 1, 3, 1, 2, 1} // mean 1.4, as 1/(1-0.3)
	for i := range 300 {
		p.Observe(at)
		at += time.Duration(gaps[i%len(gaps)]) * 100 * time.Millisecond
	}
	s, _ := p.SuspectAt()
	last := at - time.Duration(gaps[299%len(gaps)])*100*time.Millisecond
	if got := float64(s-last) / float64(100*time.Millisecond); got < 2.5 || got > 3.5 {
		t.Errorf("under loss: suspects %.2f intervals after the last heartbeat, want about 3", got)
	}
}

// Alive is evidence that the peer lived, not a heartbeat: the suspicion
// counts from it, the learnt intervals do not change, and the next
// heartbeat's interval counts from the last heartbeat. Learnt as
// arrivals, the answers to an owner's own questions (asked when its alarm
// rang) cut the intervals short, and the alarm rang earlier and earlier.
func TestPhiAliveIsNoSample(t *testing.T) {
	iv := 100 * ms
	steady := func() (*Phi, time.Duration) {
		p := NewPhi(ConfirmedPhiConfig(iv))
		at := time.Duration(0)
		for range 50 {
			at += iv
			p.Observe(at)
		}
		return p, at
	}
	p, last := steady()
	q, _ := steady() // the same without the answers
	s0, _ := p.SuspectAt()
	after := s0 - last // 150ms on a steady network
	// Twenty answers, 125µs apart, from 160ms after the last heartbeat.
	for i := range 20 {
		p.Alive(last + 160*ms + time.Duration(i)*125*time.Microsecond)
	}
	alive := last + 160*ms + 19*125*time.Microsecond
	if s, _ := p.SuspectAt(); s != alive+after {
		t.Errorf("after the answers: suspects at %v, want the last answer + %v = %v", s, after, alive+after)
	}
	if got, want := p.Phi(alive+after/2), q.Phi(last+after/2); got != want {
		t.Errorf("φ half-way to the alarm after the answers = %v, want %v as half-way after a heartbeat", got, want)
	}
	// Older evidence changes nothing.
	p.Alive(last)
	if s, _ := p.SuspectAt(); s != alive+after {
		t.Errorf("after an older Alive: suspects at %v, want %v", s, alive+after)
	}
	// The next heartbeat, two intervals after the last one, is one sample
	// of 200ms, as if no answer had come.
	p.Observe(last + 2*iv)
	q.Observe(last + 2*iv)
	ps, _ := p.SuspectAt()
	qs, _ := q.SuspectAt()
	if ps != qs {
		t.Errorf("the heartbeat after the answers: suspects at %v, want %v as without them", ps, qs)
	}
	// Before any arrival Alive starts the clock, as Observe does.
	r := NewPhi(ConfirmedPhiConfig(iv))
	r.Alive(5 * ms)
	if s, ok := r.SuspectAt(); !ok || s != 5*ms+after {
		t.Errorf("Alive first: SuspectAt = %v, %v; want %v, true", s, ok, 5*ms+after)
	}
}

// For the fixed detector evidence is as good as a heartbeat.
func TestFixedAliveIsObserve(t *testing.T) {
	f := NewFixed(FixedConfig{Timeout: 150 * ms})
	f.Observe(100 * ms)
	f.Alive(160 * ms)
	if s, _ := f.SuspectAt(); s != 310*ms {
		t.Errorf("SuspectAt = %v, want 310ms", s)
	}
}
