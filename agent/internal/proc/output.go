package proc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
)

const (
	// maxLogLine is the longest line of job, hook or check output logged
	// as one; longer lines are logged in pieces.
	maxLogLine = 4096
	// outputDrain bounds the wait for the rest of a finished process's
	// output.
	outputDrain = time.Second
	// maxLastLine is the longest last line of output kept (in bytes).
	maxLastLine = 200
)

// readLines calls piece with each line of r, without its newline, until
// r ends; a line longer than maxLogLine comes in pieces, eol false on all
// but the last. It closes r.
func readLines(r io.ReadCloser, piece func(b []byte, eol bool)) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		if n := len(line); n > 0 {
			if line[n-1] == '\n' {
				n--
			}
			piece(line[:n], !full)
		}
		if err != nil && !full {
			return
		}
	}
}

// logLines logs each line of r as the output of a job or hook, until r
// ends.
func logLines(log *slog.Logger, msg, stream string, r io.ReadCloser) {
	readLines(r, func(b []byte, _ bool) { log.Info(msg, "stream", stream, "line", string(b)) })
}

// waitOutput waits for the goroutines that read a process's output, at
// most outputDrain: a process that left its group (setsid) may hold the
// pipe open for ever; then the reading end is closed under them.
func waitOutput(wg *sync.WaitGroup, readers ...*os.File) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(outputDrain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		for _, r := range readers {
			r.Close()
		}
		<-done
	}
}

// tail keeps the last line of output with something in it but blanks.
type tail struct {
	cur   []byte // the line being read
	last  []byte
	lines int // lines with something in them
}

func (t *tail) add(b []byte, eol bool) {
	t.cur = append(t.cur, b...)
	if eol {
		t.end()
	}
}

func (t *tail) end() {
	if len(bytes.TrimSpace(t.cur)) > 0 {
		t.last = append(t.last[:0], t.cur...)
		t.lines++
	}
	t.cur = t.cur[:0]
}

// String is the last line of the output with the output's blanks
// trimmed: the line's own leading blanks stay unless it is the only one;
// at most maxLastLine bytes, then "…".
func (t *tail) String() string {
	if len(t.cur) > 0 {
		t.end()
	}
	s := string(bytes.TrimRightFunc(t.last, unicode.IsSpace))
	if t.lines == 1 {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if len(s) > maxLastLine {
		s = s[:maxLastLine] + "…"
	}
	return s
}
