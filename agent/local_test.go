package agent

import (
	"testing"
	"time"
)

func TestLocalSmoke(t *testing.T) {
	l, err := StartLocal(LocalOptions{Nodes: 3, Base: Config{Preempt: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ag, err := l.WaitAgreement(10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %d term %d", ag.Leader, ag.Term)
	for _, a := range l.Agents {
		t.Logf("%+v", a.Status())
	}
}
