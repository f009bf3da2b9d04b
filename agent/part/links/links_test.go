package links

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lanleader/lanleader/agent/part"
	"github.com/lanleader/lanleader/agent/part/parttest"
)

const ms = time.Millisecond

// fakeWatch is a Watcher whose reports the test sends; carrier is what
// its up reads.
type fakeWatch struct {
	devs    []string
	report  func(string, bool)
	carrier map[string]bool
	stopped int
	err     error
}

func (f *fakeWatch) watch(devs []string, report func(string, bool)) (func(), func(string) bool, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	f.devs, f.report = slices.Clone(devs), report
	for _, d := range devs {
		report(d, f.carrier[d])
	}
	return func() { f.stopped++ }, func(d string) bool { return f.carrier[d] }, nil
}

type fixture struct {
	h       *parttest.FakeHost
	w       *fakeWatch
	k       *Links
	changes int
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{h: parttest.NewFakeHost(), w: &fakeWatch{carrier: map[string]bool{"eth0": true, "eth1": true}}}
	f.k = New(f.h, f.w.watch, 300*ms, func() { f.changes++ })
	if err := f.k.Watch("eth0", []string{"eth1"}); err != nil {
		t.Fatal(err)
	}
	f.k.Update()
	return f
}

// The carrier lost: a reason and CarrierLost at once; back: a listen of
// the configured length (its deadline for the loop), then none.
func TestCarrierLostThenBack(t *testing.T) {
	f := newFixture(t)
	if f.changes != 0 || f.k.Reason() != "" || f.k.CarrierLost() {
		t.Fatalf("all up: %d changes, reason %q", f.changes, f.k.Reason())
	}
	select {
	case <-f.k.Kick():
	default:
		t.Fatal("the watch's first reports did not kick the loop")
	}
	f.w.report("eth0", false)
	<-f.k.Kick()
	f.k.Update()
	if f.changes != 1 || !f.k.CarrierLost() || f.k.Reason() != "the election interface has no carrier (eth0)" || !f.h.TakeDirty() {
		t.Fatalf("lost: %d changes, lost %v, reason %q", f.changes, f.k.CarrierLost(), f.k.Reason())
	}
	if _, ok := f.k.Next(); ok {
		t.Error("a deadline while the carrier is lost")
	}
	f.h.Set(time.Second)
	f.w.report("eth0", true)
	f.k.Update()
	at, ok := f.k.Next()
	if f.changes != 2 || f.k.CarrierLost() || !ok || at != time.Second+300*ms || !strings.Contains(f.k.Reason(), "listening for the leader") || f.h.Rearms() != 2 {
		t.Fatalf("back: %d changes, lost %v, next %v %v, reason %q, timer set again %d times (want 2: lost, back)",
			f.changes, f.k.CarrierLost(), at, ok, f.k.Reason(), f.h.Rearms())
	}
	f.k.Changed(&part.View{LeaderName: "db-2"})
	part.RunDue([]part.Part{f.k}, time.Second+299*ms)
	if f.changes != 2 {
		t.Fatal("the listen ended early")
	}
	part.RunDue([]part.Part{f.k}, time.Second+300*ms)
	if f.changes != 3 || f.k.Reason() != "" {
		t.Fatalf("after the listen: %d changes, reason %q", f.changes, f.k.Reason())
	}
	if !strings.Contains(f.h.LogText(), "listened for the leader after the carrier came back: this node takes part in elections again\" dev=eth0 leader=db-2") {
		t.Errorf("log %q", f.h.LogText())
	}
}

// A virtual address's interface down is a reason of its own; the
// election interface's reports do not make it one.
func TestVIPDown(t *testing.T) {
	f := newFixture(t)
	f.w.report("eth1", false)
	f.k.Update()
	if got := f.k.VIPDown(); !slices.Equal(got, []string{"eth1"}) || f.changes != 1 || f.k.CarrierLost() {
		t.Fatalf("vip down %q, %d changes, lost %v", got, f.changes, f.k.CarrierLost())
	}
	f.w.report("eth1", true)
	f.k.Update()
	if len(f.k.VIPDown()) != 0 || f.changes != 2 {
		t.Fatalf("vip up: %q, %d changes", f.k.VIPDown(), f.changes)
	}
}

// Gone reads the carrier ahead of the watch's report: a lost one is
// taken at once (the driver told), a present one changes nothing.
func TestGone(t *testing.T) {
	f := newFixture(t)
	if f.k.Gone() || f.changes != 0 {
		t.Fatalf("carrier present: gone, %d changes", f.changes)
	}
	f.w.carrier["eth0"] = false
	if !f.k.Gone() || f.changes != 1 || !f.k.CarrierLost() {
		t.Fatalf("carrier absent: %d changes, lost %v", f.changes, f.k.CarrierLost())
	}
	if f.k.Gone() {
		t.Error("gone twice: the loss is already known")
	}
}

// Watch keeps a watch of the same interfaces, starts another for others,
// and says which it could not watch; Close ends it.
func TestWatch(t *testing.T) {
	f := newFixture(t)
	if err := f.k.Watch("eth0", []string{"eth1"}); err != nil || f.w.stopped != 0 {
		t.Fatalf("the same interfaces: %v, %d stops", err, f.w.stopped)
	}
	if err := f.k.Watch("eth0", nil); err != nil || f.w.stopped != 1 || !slices.Equal(f.w.devs, []string{"eth0"}) {
		t.Fatalf("other interfaces: %v, %d stops, devs %q", err, f.w.stopped, f.w.devs)
	}
	f.w.err = errors.New("no such device")
	if err := f.k.Watch("eth9", nil); err == nil || err.Error() != "watching the links of eth9: no such device" {
		t.Fatalf("a watch that fails: %v", err)
	}
	f.k.Close()
	if f.k.ElectionDev() != "eth9" || f.k.Gone() {
		t.Error("after Close: no carrier read")
	}
}
