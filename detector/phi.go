package detector

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Limits of a [Phi] detector. They keep the running sums exact in integer
// arithmetic (see [Phi]): with at most MaxWindowSize intervals of at most
// MaxInterval each, Σx fits in 56 bits and n·Σx² and (Σx)² in 112 bits.
const (
	// MaxWindowSize is the largest accepted PhiConfig.WindowSize.
	MaxWindowSize = 1 << 16
	// MaxInterval (2^40 ns, about 18m20s) is the longest inter-arrival
	// time a Phi detector records; a longer gap is recorded as MaxInterval.
	// It is also the largest accepted PhiConfig.FirstInterval.
	MaxInterval time.Duration = 1 << 40
)

// Coefficients of the logistic approximation of the standard normal CDF
// used by Akka: Φ(y) ≈ 1 / (1 + exp(-y·(logisticB + logisticA·y²))).
const (
	logisticA = 0.070566
	logisticB = 1.5976
)

// PhiConfig configures a [Phi] detector. [DefaultPhiConfig] derives a
// complete one from the heartbeat interval.
type PhiConfig struct {
	// Threshold is the φ at and above which the peer is suspected. φ is
	// -log10 of the (approximated) probability that the next heartbeat is
	// still to come, so, if the inter-arrival times really followed the
	// fitted normal law, Threshold t would wrongly suspect a live peer
	// with probability about 10^-t per heartbeat. Must be finite and > 0.
	// Default 8 (Akka's and Cassandra's).
	Threshold float64
	// WindowSize is the number of most recent inter-arrival times (samples)
	// the mean and standard deviation are estimated from. Must be in
	// [2, MaxWindowSize]. Default 100.
	WindowSize int
	// MinStdDev is the floor under the estimated standard deviation of the
	// inter-arrival times. On a quiet network the estimate tends to zero
	// and φ would then jump to the threshold as soon as a heartbeat is a
	// little late; the floor bounds that sensitivity. Must be > 0.
	// Default interval/4.
	MinStdDev time.Duration
	// AcceptablePause is added to the estimated mean inter-arrival time: it
	// shifts the suspicion time later by exactly this much, to tolerate
	// pauses (lost heartbeats, garbage collection, scheduling hiccups)
	// that the samples do not show. Must be >= 0. Default 0.
	AcceptablePause time.Duration
	// FirstInterval is the expected heartbeat interval. It bootstraps the
	// estimate before real samples exist: like Akka's
	// first-heartbeat-estimate, the window starts with two synthetic
	// samples FirstInterval - FirstInterval/4 and FirstInterval +
	// FirstInterval/4 (mean FirstInterval, standard deviation
	// FirstInterval/4). They are then evicted like real samples, so they
	// count until WindowSize real intervals have arrived. Must be in
	// (0, MaxInterval]. Default interval.
	FirstInterval time.Duration
}

// DefaultPhiConfig returns the default configuration for heartbeats sent
// every interval. The result fails Validate if interval <= 0 or
// interval > MaxInterval.
//
// With these defaults and a steady, low-jitter heartbeat the peer is
// suspected about 2.31×interval after the last heartbeat: late enough to
// survive one lost heartbeat, early enough to react to two. Raise
// AcceptablePause to tolerate more consecutive losses.
func DefaultPhiConfig(interval time.Duration) PhiConfig {
	return PhiConfig{
		// Akka's and Cassandra's default. φ = 8 corresponds to a
		// nominal mistake probability of 1e-8 per heartbeat; it is the
		// widely deployed compromise between detection time and false
		// suspicions.
		Threshold: 8,
		// 100 samples is 10 s of history at 100 ms heartbeats: enough
		// for a stable standard deviation (its relative standard error
		// is about 1/sqrt(2·100) ≈ 7%), short enough to follow changes
		// of the network's behaviour within seconds. Akka uses 1000 for
		// 1 s heartbeats; LAN heartbeats are faster and LAN conditions
		// change faster.
		WindowSize: 100,
		// Akka uses interval/10 (100 ms for 1 s heartbeats). On a LAN
		// the measured jitter is often well under 1% of the interval, so
		// the floor, not the data, sets the detection time: with
		// interval/10 and threshold 8 that is mean + 5.2×interval/10 ≈
		// 1.52×interval, so a single lost heartbeat (a gap of
		// 2×interval) would already cause a suspicion and an election.
		// interval/4 puts the quiet-network detection time at ≈ 2.31×
		// interval (one loss tolerated, two detected), and it is the
		// same spread the bootstrap samples assume (FirstInterval/4), so
		// the detector never becomes more trigger-happy than its prior.
		// When the measured spread exceeds interval/4 the data rule.
		MinStdDev: interval / 4,
		// 0: loss tolerance comes from MinStdDev above; callers that
		// must ride out longer silences (several lost heartbeats, a
		// paused leader) add their budget here, which delays detection
		// by exactly that much.
		AcceptablePause: 0,
		// The heartbeat interval the leader is configured with is the
		// best prior for the inter-arrival time.
		FirstInterval: interval,
	}
}

// ConfirmedPhiThreshold is the φ of [ConfirmedPhiConfig]: on a quiet
// network, with the standard deviation at its floor of interval/4, φ
// reaches 1.64 two standard deviations past the mean (Akka's logistic
// approximation gives φ = 1.643 at y = 2), half an interval late: the
// alarm rings 1.5 intervals after the last heartbeat, as the fixed
// detector's with a timeout of 1.5 intervals.
const ConfirmedPhiThreshold = 1.64

// ConfirmedPhiConfig returns the configuration for an alarm that is
// confirmed before anyone acts on it (the election's ConfirmSuspicion
// asks the peer, and those that heard it, before it suspects): the
// defaults of [DefaultPhiConfig] with Threshold [ConfirmedPhiThreshold].
// A false alarm then costs a question, not a failover, so the threshold
// trades it for detection time: φ = 1.64 is a nominal 2.3 % mistake
// probability per heartbeat, against 10⁻⁸ for Akka's 8, and on a quiet
// network it suspects 1.5 intervals after the last heartbeat instead of
// 2.31. What it learns still rules: with 30 % of the heartbeats lost the
// inter-arrival times average 1.43 intervals with a standard deviation of
// 0.78, and it suspects about 3 intervals after the last one. The answers
// to the owner's questions are no heartbeats: give them to Alive, not
// Observe (see [Witnessed]), or their times, which follow the alarm, are
// learnt as intervals and keep the alarm early.
func ConfirmedPhiConfig(interval time.Duration) PhiConfig {
	c := DefaultPhiConfig(interval)
	c.Threshold = ConfirmedPhiThreshold
	return c
}

// Validate reports whether c can be used by [NewPhi]. The error names every
// invalid field.
func (c PhiConfig) Validate() error {
	var errs []error
	if !(c.Threshold > 0) || math.IsInf(c.Threshold, 0) {
		errs = append(errs, fmt.Errorf("detector: PhiConfig.Threshold must be finite and > 0, got %v", c.Threshold))
	}
	if c.WindowSize < 2 || c.WindowSize > MaxWindowSize {
		errs = append(errs, fmt.Errorf("detector: PhiConfig.WindowSize must be in [2, %d], got %d", MaxWindowSize, c.WindowSize))
	}
	if c.MinStdDev <= 0 {
		errs = append(errs, fmt.Errorf("detector: PhiConfig.MinStdDev must be > 0, got %v", c.MinStdDev))
	}
	if c.AcceptablePause < 0 {
		errs = append(errs, fmt.Errorf("detector: PhiConfig.AcceptablePause must be >= 0, got %v", c.AcceptablePause))
	}
	if c.FirstInterval <= 0 || c.FirstInterval > MaxInterval {
		errs = append(errs, fmt.Errorf("detector: PhiConfig.FirstInterval must be in (0, %v], got %v", MaxInterval, c.FirstInterval))
	}
	return errors.Join(errs...)
}

// Phi is the φ accrual failure detector (Hayashibara, Défago, Yared and
// Katayama, "The φ Accrual Failure Detector", 2004) as implemented in
// Akka's PhiAccrualFailureDetector. It implements [Detector].
//
// It keeps the last WindowSize inter-arrival times in a ring buffer
// allocated once by NewPhi, with their running sum Σx and sum of squares
// Σx² held exactly as integers of nanoseconds (Σx² in 128 bits), so no
// rounding error accumulates however long it runs and the variance
// (n·Σx² - (Σx)²)/n² is computed without cancellation, rounded once.
// The standard deviation is the population one, as in Akka.
//
// Every gap is recorded, including one that ended after SuspectAt (unlike
// Akka, which skips intervals that ended while the peer was suspected):
// a long silence therefore widens the estimate, and delays detection,
// until it leaves the window. The owner is expected to Reset when it
// starts to monitor a new leader, which also clears such samples, and
// when a gap is its own stall rather than the peer's silence (the
// election machine does when its alarm came due while it stood still).
type Phi struct {
	cfg PhiConfig

	ring []int64 // inter-arrival times in ns; len(ring) == WindowSize
	head int     // index of the oldest sample
	n    int     // number of samples held

	sum        uint64 // Σx, exact
	sqHi, sqLo uint64 // Σx², exact, 128 bits

	last    time.Duration // latest recorded arrival, valid when started
	started bool
	// alive: the latest time the peer was known alive by other evidence
	// than a heartbeat (Alive), or last if later. The suspicion counts
	// from it; the samples count from last.
	alive time.Duration

	// Derived after every change of the samples:
	mean float64 // estimated mean + AcceptablePause, ns
	std  float64 // max(estimated std, MinStdDev), ns
	rel  int64   // least elapsed ns since alive with φ >= Threshold
}

var _ Witnessed = (*Phi)(nil)

// NewPhi returns a Phi detector with no arrival recorded. It panics if
// cfg.Validate fails: check configuration that comes from users with
// Validate first.
func NewPhi(cfg PhiConfig) *Phi {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	p := &Phi{cfg: cfg, ring: make([]int64, cfg.WindowSize)}
	p.Reset()
	return p
}

// Reset implements [Detector.Reset]: it forgets every arrival and sample
// and seeds the window with the FirstInterval bootstrap samples again.
func (p *Phi) Reset() {
	p.head, p.n = 0, 0
	p.sum, p.sqHi, p.sqLo = 0, 0, 0
	p.last, p.alive, p.started = 0, 0, false
	fi := int64(p.cfg.FirstInterval)
	p.push(fi - fi/4)
	p.push(fi + fi/4)
	p.update()
}

// Observe implements [Detector.Observe]. The first arrival only starts the
// clock; each later one records the gap since the previous one (capped at
// MaxInterval) as a sample, evicting the oldest when the window is full.
func (p *Phi) Observe(at time.Duration) {
	if !p.started {
		p.last, p.alive, p.started = at, at, true
		return
	}
	if at < p.last {
		return
	}
	p.push(elapsed(p.last, at))
	p.last, p.alive = at, max(p.alive, at)
	p.update()
}

// Alive implements [Witnessed]: the peer was alive at at, by other
// evidence than its heartbeat. The suspicion counts from at as from an
// arrival (if it is later than the latest evidence), but no inter-arrival
// time is recorded: the next heartbeat's is counted from the last
// heartbeat. An answer to the owner's question comes when the owner's
// alarm rang, so its time follows the threshold, not the peer's rhythm;
// learnt as an arrival it would cut a heartbeat's interval in two
// shorter ones, the estimated mean would fall, and the alarm ring
// earlier and ask again sooner. Before the first arrival it starts the
// clock, as the first Observe does.
func (p *Phi) Alive(at time.Duration) {
	if !p.started {
		p.last, p.alive, p.started = at, at, true
		return
	}
	p.alive = max(p.alive, at)
}

// SuspectAt implements [Detector.SuspectAt]: the last arrival (or the
// later evidence given to Alive) plus the least elapsed time, to the nanosecond, at which φ reaches Threshold
// (saturating at the largest Duration). Because φ is increasing in the
// elapsed time (see [Phi.Phi]) this is well defined, and
//
//	Phi(SuspectAt()-1) < Threshold <= Phi(SuspectAt())
//
// It costs no computation: the answer is solved when a heartbeat is
// observed.
func (p *Phi) SuspectAt() (time.Duration, bool) {
	if !p.started {
		return 0, false
	}
	return addSat(p.alive, time.Duration(p.rel)), true
}

// Suspect implements [Detector.Suspect]: exactly ok && now >= SuspectAt().
func (p *Phi) Suspect(now time.Duration) bool {
	at, ok := p.SuspectAt()
	return ok && now >= at
}

// Phi returns the suspicion level φ at now, for metrics and tests. It is 0
// before the first arrival; a now before the last arrival (or Alive's
// later evidence) counts as that.
//
// With t the time elapsed since the last arrival (or Alive's later
// evidence), μ the estimated mean
// inter-arrival time plus AcceptablePause and σ the estimated standard
// deviation (at least MinStdDev), y = (t-μ)/σ and
// e = exp(-y·(1.5976 + 0.070566·y²)), φ is Akka's
//
//	φ = -log10(e / (1+e))        if t > μ
//	φ = -log10(1 - 1/(1+e))      otherwise
//
// Both lines are the same function, -log10(1 - F(y)) with F Akka's
// logistic approximation of the standard normal CDF (Akka writes it two
// ways to keep precision on each side of μ). It is evaluated here in an
// equivalent form that stays finite: Phi never returns +Inf or NaN.
//
// φ is increasing in t: y·(1.5976 + 0.070566·y²) has derivative
// 1.5976 + 0.211698·y² > 0, so F is strictly increasing in y, and y is
// strictly increasing in t (σ > 0). Rounded to float64 it is
// non-decreasing. That is what makes SuspectAt well defined.
func (p *Phi) Phi(now time.Duration) float64 {
	if !p.started {
		return 0
	}
	var t int64
	if now > p.alive {
		t = elapsed(p.alive, now)
	}
	return phiOf(float64(t), p.mean, p.std)
}

// elapsed returns to - from (to >= from) in ns without overflow, capped at
// the largest int64.
func elapsed(from, to time.Duration) int64 {
	d := uint64(to) - uint64(from)
	if d > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d)
}

// push adds the sample x (ns, >= 0, capped at MaxInterval), evicting the
// oldest one when the window is full. Sums are updated exactly; uint64
// arithmetic is modular, so the subtraction of the evicted sample is exact
// too.
func (p *Phi) push(x int64) {
	x = min(max(x, 0), int64(MaxInterval))
	if p.n == len(p.ring) {
		old := uint64(p.ring[p.head])
		p.sum -= old
		hi, lo := bits.Mul64(old, old)
		var borrow uint64
		p.sqLo, borrow = bits.Sub64(p.sqLo, lo, 0)
		p.sqHi, _ = bits.Sub64(p.sqHi, hi, borrow)
		p.ring[p.head] = x
		p.head++
		if p.head == len(p.ring) {
			p.head = 0
		}
	} else {
		i := p.head + p.n
		if i >= len(p.ring) {
			i -= len(p.ring)
		}
		p.ring[i] = x
		p.n++
	}
	u := uint64(x)
	p.sum += u
	hi, lo := bits.Mul64(u, u)
	var carry uint64
	p.sqLo, carry = bits.Add64(p.sqLo, lo, 0)
	p.sqHi, _ = bits.Add64(p.sqHi, hi, carry)
}

// update recomputes mean, std and rel from the sums.
func (p *Phi) update() {
	n := uint64(p.n)
	// D = n·Σx² - (Σx)², exact in 128 bits (both terms < 2^112), >= 0.
	c, lo := bits.Mul64(n, p.sqLo)
	hi := n*p.sqHi + c
	s2hi, s2lo := bits.Mul64(p.sum, p.sum)
	dlo, borrow := bits.Sub64(lo, s2lo, 0)
	dhi, _ := bits.Sub64(hi, s2hi, borrow)
	d := float64(dhi)*0x1p64 + float64(dlo)
	nf := float64(n)
	variance := d / (nf * nf)

	p.mean = float64(p.sum)/nf + float64(p.cfg.AcceptablePause)
	p.std = max(math.Sqrt(variance), float64(p.cfg.MinStdDev))
	p.rel = p.solve()
}

// phiOf is φ for elapsed time t given mean and std (all in ns, std > 0).
//
// It is Akka's function, -log10(e/(1+e)) with e = exp(-g) and
// g = y·(1.5976 + 0.070566·y²), evaluated as log10(1 + exp(g)) in a form
// that neither underflows nor cancels: Akka's expression becomes +Inf once
// e underflows (φ above about 307), which no metrics encoder likes, and
// loses relative precision far below the mean.
func phiOf(t, mean, std float64) float64 {
	y := (t - mean) / std
	g := y * (logisticB + logisticA*y*y)
	if g > 0 {
		// -log10(e/(1+e)) = (g + ln(1+e)) / ln 10, with e = exp(-g) < 1.
		return (g + math.Log1p(math.Exp(-g))) / math.Ln10
	}
	// -log10(1 - 1/(1+e)) = ln(1 + exp(g)) / ln 10, with exp(g) <= 1.
	return math.Log1p(math.Exp(g)) / math.Ln10
}

func (p *Phi) phiAt(t int64) float64 { return phiOf(float64(t), p.mean, p.std) }

// solve returns the least t >= 0 (ns since the last arrival) with
// phiAt(t) >= Threshold, or MaxInt64 if there is none.
//
// φ(t) = Threshold means F(y) = 1 - 10^-Threshold, i.e. the cubic
// a·y³ + b·y = c with c = ln((1-p)/p), p = 10^-Threshold, whose left side
// is strictly increasing: it has one real root, given by Cardano's formula
// and polished by Newton's method. t = μ + y·σ is then only a guess
// (rounding), so the exact nanosecond is found by searching around it with
// the very function Phi evaluates: galloping to bracket the crossing, then
// bisecting. That makes SuspectAt and Phi agree to the nanosecond.
func (p *Phi) solve() int64 {
	th := p.cfg.Threshold
	x := th * math.Ln10
	c := math.Log(-math.Expm1(-x)) + x // ln((1-p)/p) without cancellation

	var y float64
	switch {
	case math.IsInf(c, -1):
		y = math.Inf(-1)
	case math.IsInf(c, 1):
		y = math.Inf(1)
	default:
		// y³ + P·y + Q = 0 with P = b/a > 0, Q = -c/a.
		const P = logisticB / logisticA
		q := -c / logisticA
		s := math.Sqrt(q*q/4 + P*P*P/27)
		y = math.Cbrt(-q/2+s) + math.Cbrt(-q/2-s)
		for range 3 {
			f := (logisticA*y*y+logisticB)*y - c
			y -= f / (3*logisticA*y*y + logisticB)
		}
	}

	var g int64
	switch t := p.mean + y*p.std; {
	case math.IsNaN(t) || t <= 0:
		g = 0
	case t >= math.MaxInt64:
		g = math.MaxInt64
	default:
		g = int64(math.Ceil(t))
	}

	// Bracket: phiAt(lo) < th <= phiAt(hi).
	var lo, hi int64
	if p.phiAt(g) >= th {
		hi = g
		for step := int64(1); ; step <<= 1 {
			if hi == 0 {
				return 0
			}
			cand := int64(0)
			if step < hi {
				cand = hi - step
			}
			if p.phiAt(cand) < th {
				lo = cand
				break
			}
			hi = cand
		}
	} else {
		lo = g
		for step := int64(1); ; step <<= 1 {
			cand := int64(math.MaxInt64)
			if step > 0 && step < math.MaxInt64-lo {
				cand = lo + step
			}
			if p.phiAt(cand) >= th {
				hi = cand
				break
			}
			if cand == math.MaxInt64 {
				return math.MaxInt64
			}
			lo = cand
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p.phiAt(mid) >= th {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
