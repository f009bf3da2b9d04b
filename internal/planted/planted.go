// Package planted holds the bugs that the checkers (the simulator, the
// explorer) plant on purpose to show that they catch what follows. Each
// is an old rule or a missing step that once ran two jobs or two leaders
// at once. The package is internal to the module: a user of the election
// package can neither name nor set them.
package planted

// Election breaks the election machine (election.Config.Planted).
type Election struct {
	// DeposedAck: a leader that is deposed (it follows a later claim, or
	// its lease runs out) votes for the next claimant at once, while its
	// own lease, and the job that lease covers, may still run. With two
	// candidates and a witness that vote alone completes the new leader's
	// majority.
	DeposedAck bool
	// SkipWakeCheck: a leader that wakes up after a pause does not check
	// its lease before handling what came in meanwhile.
	SkipWakeCheck bool
}
