// Package progress prints one line per step of long work, with the time
// elapsed since the run started, so a person watching a cold build sees it move.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Logger writes timestamped step lines. The zero value writes to stderr.
type Logger struct {
	mu    sync.Mutex
	Out   io.Writer
	start time.Time
}

// New returns a Logger writing to w (stderr when nil).
func New(w io.Writer) *Logger {
	if w == nil {
		w = os.Stderr
	}
	return &Logger{Out: w, start: time.Now()}
}

// Printf writes one step line prefixed by the elapsed time.
func (l *Logger) Printf(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Out == nil {
		l.Out = os.Stderr
	}
	if l.start.IsZero() {
		l.start = time.Now()
	}
	fmt.Fprintf(l.Out, "[%7.1fs] %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
}

// Step logs the start of a step and returns a func that logs its end with
// its own duration; call it with the step's error.
func (l *Logger) Step(format string, args ...any) func(error) {
	name := fmt.Sprintf(format, args...)
	l.Printf("%s ...", name)
	t := time.Now()
	return func(err error) {
		if err != nil {
			l.Printf("%s FAILED after %s: %v", name, time.Since(t).Round(100*time.Millisecond), err)
			return
		}
		l.Printf("%s done in %s", name, time.Since(t).Round(100*time.Millisecond))
	}
}
