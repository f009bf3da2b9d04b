package majority

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestNote: the waiting line once, not again for the same count, again
// for another count or after LogEvery, and one line when a majority is
// heard; nothing while a leader is known.
func TestNote(t *testing.T) {
	var buf bytes.Buffer
	w := New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	take := func() string {
		var msgs []string
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if i := strings.Index(l, `msg="`); i >= 0 {
				m := l[i+5:]
				msgs = append(msgs, m[:strings.Index(m, `"`)])
			}
		}
		buf.Reset()
		return strings.Join(msgs, "|")
	}
	alone, two := View{Quorum: 3, Voters: []string{"a"}}, View{Quorum: 3, Voters: []string{"a", "b"}}
	steps := []struct {
		at   time.Duration
		v    View
		want string
	}{
		{0, alone, "waiting for a majority of 3 (2 votes): 1 heard"},
		{time.Second, alone, ""},
		{LogEvery - time.Second, alone, ""},
		{LogEvery, alone, "waiting for a majority of 3 (2 votes): 1 heard"},
		{LogEvery + time.Second, two, "a majority of 3 (2 votes) is heard: 2; a leader can be elected"},
		{LogEvery + 2*time.Second, two, ""},
		{LogEvery + 3*time.Second, View{Quorum: 3, Voters: []string{"a"}, Leader: "b"}, ""},
	}
	for _, s := range steps {
		w.Note(s.at, s.v)
		if got := take(); got != s.want {
			t.Errorf("at %v, %d heard: logged %q, want %q", s.at, len(s.v.Voters), got, s.want)
		}
	}
}
