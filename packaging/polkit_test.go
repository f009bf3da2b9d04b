package packaging

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// polkitHarness evaluates the rule file (argv[1]) as polkitd does, with
// a stand-in polkit object, for each case of argv[2] (JSON: user, action
// id, unit, verb) and prints one result a line.
const polkitHarness = `
const fs = require("fs");
let rule = null;
const polkit = {Result: {YES: "yes", NO: "no", NOT_HANDLED: "not_handled"}, addRule: f => { rule = f; }};
new Function("polkit", fs.readFileSync(process.argv[2], "utf8"))(polkit);
for (const c of JSON.parse(process.argv[3])) {
  const action = {id: c.id, lookup: k => ({unit: c.unit, verb: c.verb})[k]};
  console.log(rule(action, {user: c.user}));
}
`

// TestPolkitRule: the shipped rule lets the agent's user start, stop,
// restart and kill the units named lanleader-job*.service, and nothing
// else: not other units, not other verbs, not other users, not other
// actions (run with node, when it is installed).
func TestPolkitRule(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the rule's JavaScript is not evaluated")
	}
	cases := []struct {
		user, id, unit, verb, want string
	}{
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader-job-test.service", "start", "yes"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader-job.service", "stop", "yes"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader-job@queue.service", "restart", "yes"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader-job-db.service", "kill", "yes"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "ssh.service", "stop", "not_handled"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader.service", "stop", "not_handled"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader-job.timer", "start", "not_handled"},
		{"lanleader", "org.freedesktop.systemd1.manage-units", "lanleader-job-test.service", "enable", "not_handled"},
		{"lanleader", "org.freedesktop.systemd1.manage-unit-files", "lanleader-job-test.service", "", "not_handled"},
		{"nobody", "org.freedesktop.systemd1.manage-units", "lanleader-job-test.service", "start", "not_handled"},
	}
	var js strings.Builder
	js.WriteString("[")
	for i, c := range cases {
		if i > 0 {
			js.WriteString(",")
		}
		js.WriteString(`{"user":"` + c.user + `","id":"` + c.id + `","unit":"` + c.unit + `","verb":"` + c.verb + `"}`)
	}
	js.WriteString("]")
	harness := t.TempDir() + "/harness.js"
	if err := os.WriteFile(harness, []byte(polkitHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, harness, "../systemd/lanleader-job.rules", js.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != len(cases) {
		t.Fatalf("results %q, want %d", got, len(cases))
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s %s %s %s: %s, want %s", c.user, c.id, c.unit, c.verb, got[i], c.want)
		}
	}
}
