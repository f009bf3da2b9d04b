package election

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// designDoc is the contributors' document of the election, whose table
// of defaults documents DefaultConfig.
const designDoc = "../docs/design/election.md"

// The design document's table of defaults is the documentation of
// DefaultConfig: every row must name a Config field and give its value,
// and every default must have a row.
func TestDesignDocDefaultsMatchDefaultConfig(t *testing.T) {
	text, err := os.ReadFile(designDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(text), "## Defaults (`election.DefaultConfig`)")
	if !ok {
		t.Fatalf("%s has no section \"## Defaults (`election.DefaultConfig`)\"", designDoc)
	}
	start := strings.Index(table, "|")
	if end := strings.Index(table[start:], "\n\n"); start >= 0 && end > 0 {
		table = table[start : start+end]
	}
	row := regexp.MustCompile("(?m)^\\| `(\\w+)`[^|]*\\| ([^|]+) \\|")
	dur := regexp.MustCompile(`^(\d+) (ms|s)\b`)
	cfg := reflect.ValueOf(DefaultConfig(1))
	seen := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		name, cell := m[1], strings.TrimSpace(m[2])
		f := cfg.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("%s: row %q names no Config field", designDoc, name)
			continue
		}
		seen[name] = true
		var doc string
		switch v := f.Interface().(type) {
		case time.Duration:
			if _, after, ok := strings.Cut(cell, "= "); ok { // "10 × heartbeat = 1 s, …"
				cell = after
			}
			if d := dur.FindStringSubmatch(cell); d != nil {
				n, _ := strconv.Atoi(d[1])
				doc = (time.Duration(n) * map[string]time.Duration{"ms": time.Millisecond, "s": time.Second}[d[2]]).String()
			} else if strings.HasPrefix(cell, "0") {
				doc = time.Duration(0).String()
			}
			if doc != v.String() {
				t.Errorf("%s says %s = %q, DefaultConfig has %v", designDoc, name, cell, v)
			}
		default:
			if got := fmt.Sprint(v); !strings.HasPrefix(cell, got) {
				t.Errorf("%s says %s = %q, DefaultConfig has %v", designDoc, name, cell, got)
			}
		}
	}
	for _, name := range []string{"Priority", "HeartbeatInterval", "SuspectAfter", "AnswerTimeout", "CoordinatorTimeout", "StartupWait", "Preempt", "PreemptDelay", "ResignHoldoff", "ConfirmTimeout"} {
		if !seen[name] {
			t.Errorf("%s: the defaults table has no row for %s", designDoc, name)
		}
	}
}
