package cmdtest

import "testing"

// TestRun: the command's standard output comes back, run in dir with env
// added.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if got := Run(t, dir, []string{"CMDTEST_X=42"}, "sh", "-c", `echo "$CMDTEST_X $(pwd)"`); got != "42 "+dir+"\n" {
		t.Errorf("Run = %q, want %q", got, "42 "+dir+"\n")
	}
}
