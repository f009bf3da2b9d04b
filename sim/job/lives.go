package job

import (
	"fmt"
	"time"

	"github.com/lanleader/lanleader/election"
)

// Life is one run of a job: from its process's start to its death, on
// the global clock.
type Life struct {
	Node  int // the node's index
	ID    election.NodeID
	Term  uint64 // the term of the leadership that started it
	Start time.Duration
	End   time.Duration // valid once !Open
	Open  bool
	// Orphan: its agent crashed while it ran; the guard stopped it.
	Orphan bool
}

func (l Life) String() string {
	end := "…"
	if !l.Open {
		end = fmt.Sprint(l.End)
	}
	s := fmt.Sprintf("n%d term %d [%v, %s]", l.ID, l.Term, l.Start, end)
	if l.Orphan {
		s += " orphaned"
	}
	return s
}

// Overlap is a pair of lives that ran at once, for D.
type Overlap struct {
	A, B Life
	D    time.Duration
}

func (o Overlap) String() string {
	return fmt.Sprintf("%v and %v overlap by %v", o.A, o.B, o.D)
}

// Lives records the lives of every node's jobs and finds those that
// overlap: each pair once, when the first of the two dies (or at Finish).
type Lives struct {
	All      []Life
	Overlaps int           // pairs that overlapped
	Max      time.Duration // the longest overlap
	Total    time.Duration // the overlaps summed
}

// Start records that node's job started at at; it returns the life's
// index for End.
func (ls *Lives) Start(node int, id election.NodeID, term uint64, at time.Duration) int {
	ls.All = append(ls.All, Life{Node: node, ID: id, Term: term, Start: at, Open: true})
	return len(ls.All) - 1
}

// Running returns the indexes of the lives that are open, in order.
func (ls *Lives) Running(dst []int) []int {
	for k := range ls.All {
		if ls.All[k].Open {
			dst = append(dst, k)
		}
	}
	return dst
}

// End records the death of life k at at, and returns its overlaps with
// the lives still open.
func (ls *Lives) End(k int, at time.Duration) []Overlap {
	l := &ls.All[k]
	if !l.Open {
		return nil
	}
	l.End, l.Open = at, false
	var out []Overlap
	for j := range ls.All {
		o := &ls.All[j]
		if j == k || !o.Open {
			continue
		}
		if d := at - max(l.Start, o.Start); d > 0 {
			out = append(out, ls.count(*l, *o, d))
		}
	}
	return out
}

// Finish reports the overlaps of the lives still open at at, the end of
// a run, without closing them.
func (ls *Lives) Finish(at time.Duration) []Overlap {
	var out []Overlap
	for k := range ls.All {
		for j := k + 1; j < len(ls.All); j++ {
			a, b := ls.All[k], ls.All[j]
			if a.Open && b.Open {
				if d := at - max(a.Start, b.Start); d > 0 {
					out = append(out, ls.count(a, b, d))
				}
			}
		}
	}
	return out
}

func (ls *Lives) count(a, b Life, d time.Duration) Overlap {
	ls.Overlaps++
	ls.Total += d
	ls.Max = max(ls.Max, d)
	return Overlap{A: a, B: b, D: d}
}

// AliveAt reports whether a job of node id was alive at t (for a delayed
// view of a member's metadata).
func (ls *Lives) AliveAt(id election.NodeID, t time.Duration) bool {
	for _, l := range ls.All {
		if l.ID == id && l.Start <= t && (l.Open || t < l.End) {
			return true
		}
	}
	return false
}
