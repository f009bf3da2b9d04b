// Package detector holds the failure detectors with which a lanleader
// follower judges the leader it monitors from the arrival times of the
// leader's heartbeats.
//
// A [Detector] is fed one call to [Detector.Observe] per heartbeat and
// answers one question: from what time on must the leader be suspected if
// no further heartbeat arrives ([Detector.SuspectAt]), and is it suspected
// now ([Detector.Suspect]). Because SuspectAt is a deadline rather than a
// yes/no answer, the owner can arm a single timer for it instead of
// polling.
//
// Two implementations are provided:
//
//   - [Fixed]: suspicion a constant [FixedConfig.Timeout] after the last
//     heartbeat. Simple, predictable, blind to the network's behaviour.
//   - [Phi]: the φ accrual failure detector of Hayashibara et al. (2004),
//     computed as in Akka's PhiAccrualFailureDetector (and Cassandra): it
//     learns the mean and spread of the inter-arrival times over a sliding
//     window and suspects once φ, the negative decimal logarithm of the
//     probability that a heartbeat is still to come, reaches a threshold.
//
// What the package must not do: it is pure computation. It starts no
// goroutines, never reads a clock (all times are time.Duration values on the
// caller's monotonic clock, passed in), uses no randomness, does no I/O and
// does not log. Given the same calls it always gives the same answers, so
// the election machine and the simulator can replay arrival series
// deterministically. Detectors are not safe for concurrent use; their owner
// calls them from one goroutine. Observe and SuspectAt do not allocate.
package detector
