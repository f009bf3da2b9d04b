package detector_test

import (
	"fmt"
	"time"

	"github.com/lanleader/lanleader/detector"
)

// A follower monitoring a leader that sends a heartbeat every 100ms.
// Times are on the follower's monotonic clock.
func ExamplePhi() {
	d := detector.NewPhi(detector.DefaultPhiConfig(100 * time.Millisecond))
	for k := range 200 {
		d.Observe(time.Duration(k) * 100 * time.Millisecond)
	}
	last := 19900 * time.Millisecond
	at, _ := d.SuspectAt()
	fmt.Println("suspect", (at - last).Round(time.Millisecond), "after the last heartbeat")
	fmt.Printf("phi 200ms after it: %.2f, suspected: %v\n", d.Phi(last+200*time.Millisecond), d.Suspect(last+200*time.Millisecond))
	fmt.Printf("phi 250ms after it: %.2f, suspected: %v\n", d.Phi(last+250*time.Millisecond), d.Suspect(last+250*time.Millisecond))
	// Output:
	// suspect 231ms after the last heartbeat
	// phi 200ms after it: 4.74, suspected: false
	// phi 250ms after it: 10.78, suspected: true
}

func ExampleFixed() {
	d := detector.NewFixed(detector.FixedConfig{Timeout: 300 * time.Millisecond})
	d.Observe(5 * time.Second)
	at, _ := d.SuspectAt()
	fmt.Println(at, d.Suspect(at-1), d.Suspect(at))
	// Output: 5.3s false true
}
