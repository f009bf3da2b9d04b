package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The queue pops in (at, seq) order, whatever the order of the pushes and
// pops interleaved with them: checked against a naive oracle that scans
// for the least item.
func TestQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q queue
	var oracle []qitem
	seq := uint64(0)
	for step := range 5000 {
		if r.IntN(3) > 0 || len(oracle) == 0 {
			seq++
			it := qitem{at: time.Duration(r.IntN(50)), seq: seq}
			q.push(it)
			oracle = append(oracle, it)
			continue
		}
		m := 0
		for i := range oracle {
			if oracle[i].before(oracle[m]) {
				m = i
			}
		}
		if got := q.pop(); got != oracle[m] {
			t.Fatalf("step %d: popped %+v, want %+v", step, got, oracle[m])
		}
		oracle = slices.Delete(oracle, m, m+1)
	}
	if len(q) != len(oracle) {
		t.Fatalf("queue holds %d, oracle %d", len(q), len(oracle))
	}
}
