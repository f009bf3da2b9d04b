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
	l.Crash(ag.Index)
	l.WaitAgreement(10*time.Second, nil)
	l.Start(ag.Index)
	ag, err = l.WaitAgreement(10*time.Second, func(a Agreement) bool { return a.Index == l.Largest() })
	time.Sleep(time.Second)
	t0 := time.Now()
	done := l.StopAsync(ag.Index)
	for i := 0; i < 400; i++ {
		t.Logf("%v %v", time.Since(t0).Round(time.Millisecond), l.Agreement())
		time.Sleep(time.Millisecond)
		if l.Agreement().Leader != 0 && l.Agreement().Leader != ag.Leader {
			break
		}
	}
	<-done
}
