package agent

import (
	"os"
	"testing"
)

// TestMain enters the job guard first: the agents of these tests start
// their jobs through this test binary, started again as the guard.
func TestMain(m *testing.M) {
	Guard()
	os.Exit(m.Run())
}
