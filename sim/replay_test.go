package sim

import (
	"os"
	"testing"
)

func TestTraceSeed(t *testing.T) {
	if *flagSeed == 0 {
		t.Skip("needs -sim.seed")
	}
	sch := Generate(*flagSeed)
	res := Run(sch, os.Stdout)
	t.Log(res.Violations)
}
