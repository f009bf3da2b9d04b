// Package cmdtest runs the commands a test needs done (a build, a
// package inspection) and fails the test, with their output, when one
// fails.
package cmdtest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Run runs name with args in dir (the current directory when ""), with
// env added to the test's environment, and returns its standard output.
// A command that fails ends the test with both of its outputs.
func Run(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}
