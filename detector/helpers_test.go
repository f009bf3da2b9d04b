package detector

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// This file holds the test oracles. They deliberately share no code with
// the package: the statistics are computed by a two-pass float sum over an
// explicit list of samples, φ by a different (algebraically equal) formula,
// and the suspicion time by a brute-force scan.

// oraclePhi is φ exactly as the brief and Akka write it: with
// y = (t-mean)/std and e = exp(-y·(1.5976 + 0.070566·y²)),
// -log10(e/(1+e)) if t > mean, else -log10(1 - 1/(1+e)). It is +Inf once
// e underflows (φ above about 307), so comparisons use it below that.
func oraclePhi(t, mean, std float64) float64 {
	y := (t - mean) / std
	e := math.Exp(-y * (1.5976 + 0.070566*y*y))
	if t > mean {
		return -math.Log10(e / (1 + e))
	}
	return -math.Log10(1 - 1/(1+e))
}

// oracleStats returns the population mean and standard deviation of xs, in
// ns, by two passes.
func oracleStats(xs []time.Duration) (mean, std float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		d := float64(x) - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// oracleWindow lists the samples a Phi detector with cfg should hold after
// the given arrivals: the two bootstrap samples, then every gap, keeping
// the last WindowSize.
func oracleWindow(cfg PhiConfig, arrivals []time.Duration) []time.Duration {
	fi := cfg.FirstInterval
	xs := []time.Duration{fi - fi/4, fi + fi/4}
	for i := 1; i < len(arrivals); i++ {
		xs = append(xs, arrivals[i]-arrivals[i-1])
	}
	if len(xs) > cfg.WindowSize {
		xs = xs[len(xs)-cfg.WindowSize:]
	}
	return xs
}

// oracleParams returns the effective mean and std (ns) cfg applies to the
// samples xs.
func oracleParams(cfg PhiConfig, xs []time.Duration) (mean, std float64) {
	mean, std = oracleStats(xs)
	return mean + float64(cfg.AcceptablePause), math.Max(std, float64(cfg.MinStdDev))
}

// scanSuspect returns the first multiple of step, from 0, at which
// oraclePhi reaches th: the true crossing lies in (result-step, result].
func scanSuspect(mean, std, th float64, step time.Duration) time.Duration {
	for t := time.Duration(0); ; t += step {
		if oraclePhi(float64(t), mean, std) >= th {
			return t
		}
	}
}

type jitterKind int

const (
	normalJitter  jitterKind = iota // N(0, sd²)
	uniformJitter                   // U(-sd·√3, sd·√3), standard deviation sd
)

func (k jitterKind) String() string {
	if k == uniformJitter {
		return "uniform"
	}
	return "normal"
}

// arrivalSeries models a leader that sends a heartbeat every interval and
// a network that delays each one by an independent jitter of standard
// deviation sd: arrival k = 10s + k·interval + J_k. The receiver sees the
// arrivals in time order, so they are sorted (a heartbeat overtaken by the
// next one arrives after it). The gaps then have standard deviation about
// sd·√2.
func arrivalSeries(n int, interval, sd time.Duration, kind jitterKind, seed uint64) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 0x1ead1ead))
	out := make([]time.Duration, n)
	for k := range out {
		var j float64
		switch kind {
		case normalJitter:
			j = r.NormFloat64()
		case uniformJitter:
			j = (2*r.Float64() - 1) * math.Sqrt(3)
		}
		out[k] = 10*time.Second + time.Duration(k)*interval + time.Duration(j*float64(sd))
	}
	slices.Sort(out)
	return out
}

// steadySeries is n arrivals exactly interval apart, from start.
func steadySeries(n int, start, interval time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for k := range out {
		out[k] = start + time.Duration(k)*interval
	}
	return out
}

func observeAll(d Detector, arrivals []time.Duration) {
	for _, a := range arrivals {
		d.Observe(a)
	}
}

// relSuspect is SuspectAt minus the last arrival.
func relSuspect(d Detector, last time.Duration) time.Duration {
	at, ok := d.SuspectAt()
	if !ok {
		panic("SuspectAt: ok = false")
	}
	return at - last
}
