// Command msgcount prints how many messages and packets one bully election
// costs after the coordinator dies, for growing cluster sizes, in the best
// case (the largest live node notices), the worst case (the smallest
// notices) and the common case on a LAN (every node notices at once), next
// to the textbook's figures: the seeds' bully (the zero election.Hardening), then the
// O(n) election the agent runs. Runs are simulated (sim/), deterministic
// for a seed.
//
//	go run ./bench/msgcount [-n 4,8,16,32,64,128] [-seed 1]
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/lanleader/lanleader/bench/internal/lists"
	"github.com/lanleader/lanleader/sim"
	"github.com/lanleader/lanleader/wire"
)

func main() {
	sizes := flag.String("n", "4,8,16,32,64,128", "comma-separated cluster sizes")
	seed := flag.Uint64("seed", 1, "simulator seed (packet delays)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: msgcount [-n 4,8,16] [-seed 1]\n\nMessages and packets of one bully election after the coordinator dies.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	ns, err := lists.Sizes("-n", *sizes, 3, 1<<16)
	if err != nil {
		fmt.Fprintf(os.Stderr, "msgcount: %v\n", err)
		os.Exit(2)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "n\tcase\tELECTION\tANSWER\tCOORDINATOR\tmessages\ttextbook\tmulticast pkts\tunicast pkts\ttime\t|\tO(n) msgs\tO(n) pkts\tconfirm pkts\tO(n) time\t")
	for _, n := range ns {
		for _, c := range []sim.Case{sim.CaseBest, sim.CaseWorst, sim.CaseAll} {
			r, err := sim.CountElection(n, c, *seed)
			if err != nil {
				fmt.Fprintln(os.Stderr, "msgcount:", err)
				os.Exit(1)
			}
			a, err := sim.CountAgentElection(n, c, *seed)
			if err != nil {
				fmt.Fprintln(os.Stderr, "msgcount:", err)
				os.Exit(1)
			}
			book := "-"
			switch c {
			case sim.CaseBest:
				book = strconv.Itoa(sim.TextbookBest(n))
			case sim.CaseWorst:
				book = strconv.Itoa(sim.TextbookWorst(n))
			}
			fmt.Fprintf(w, "%d\t%v\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%v\t|\t%d\t%d\t%d\t%v\t\n", n, c,
				r.Messages[wire.TypeElection], r.Messages[wire.TypeAnswer], r.Messages[wire.TypeCoordinator],
				r.TotalMessages(), book, r.TotalPackets(), r.TotalUnicast(), r.Took.Round(time.Microsecond),
				a.TotalMessages(), a.TotalPackets(), a.Confirm(), a.Took.Round(time.Microsecond))
		}
	}
	w.Flush()
	fmt.Println(`
messages: the algorithm's view (a broadcast to k members counts k); multicast
pkts: packets on the wire with multicast (a broadcast is one packet); unicast
pkts: with --transport unicast (a broadcast is one packet per member).
textbook: best n-2 (the second-highest process sends COORDINATOR to the
others), worst n^2-n-1 (every process i sends ELECTION to the n-i above it,
the live ones answer, the winner sends n-2 COORDINATOR).
best is textbook+1: the COORDINATOR also goes to the dead coordinator, which
the membership layer still lists. worst equals the textbook: the node that
noticed skips the coordinator it suspects (-1) and the COORDINATOR goes to
the dead one too (+1). all: every node notices at once (the usual case on
a LAN): the second-highest claims at once, the others' elections still
cost (n-1)(n-2)/2 ELECTION and as many ANSWER, and the new leader answers
each late ELECTION with a unicast COORDINATOR. time: from the suspicion to
the last node following the new leader; in the worst case it includes T
(the answer timeout), waited by the second-highest node for the dead
coordinator's ANSWER.

After the |: the O(n) election the agent runs (docs/design/election.md,
"Elections in O(n) packets"): messages and multicast packets of ELECTION, ANSWER and
COORDINATOR; confirm pkts: the PROBE and VOUCH packets of the
confirmations that come before the suspicion (the stability hardening:
probe rounds of every node that suspects); time as above. Best and worst
include the confirmations of the nodes that did not notice: they hear of
the crash from the noticer's ELECTION or claim, and ask first.`)
}
