package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once: every write is there, whole.
func TestConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 400 || len(b.String()) != 400*5 {
		t.Fatalf("%d whole lines in %d bytes, want 400 in 2000", got, len(b.String()))
	}
}
