package nodeimage

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// stage is one step of a build, the stages it waited on (for their output,
// or for the cores a compile before it held), and how long it took.
type stage struct {
	name  string
	after []string
	took  time.Duration
}

// stages records a build's steps, from more than one goroutine.
type stages struct {
	mu   sync.Mutex
	list []stage
}

// run runs f as the stage name, which waited on after.
func (s *stages) run(name string, after []string, f func() error) error {
	start := time.Now()
	err := f()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, stage{name: name, after: after, took: time.Since(start)})
	return err
}

// critical is the chain that decided the build's length: the stage that
// ends last, counting each stage from the end of what it waited on, then
// back through whichever of those ended last.
func (s *stages) critical() (path []stage, total time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]stage{}
	for _, st := range s.list {
		byName[st.name] = st
	}
	end := map[string]time.Duration{}
	var endOf func(string) time.Duration
	endOf = func(name string) time.Duration {
		if e, ok := end[name]; ok {
			return e
		}
		st, ok := byName[name]
		if !ok {
			return 0 // never ran (the build failed before it)
		}
		var from time.Duration
		for _, a := range st.after {
			from = max(from, endOf(a))
		}
		end[name] = from + st.took
		return end[name]
	}
	last := ""
	for _, st := range s.list {
		if last == "" || endOf(st.name) > endOf(last) {
			last = st.name
		}
	}
	for name := last; name != ""; {
		st := byName[name]
		path = append(path, st)
		name = ""
		for _, a := range st.after {
			if _, ok := byName[a]; ok && (name == "" || endOf(a) > endOf(name)) {
				name = a
			}
		}
	}
	slices.Reverse(path)
	return path, endOf(last)
}

// summary is the build's closing line: the critical path's stages that
// took a second or more, and the others that took that long beside it.
func (s *stages) summary() string {
	path, total := s.critical()
	var on []string
	onPath := map[string]bool{}
	for _, st := range path {
		onPath[st.name] = true
		if st.took >= time.Second {
			on = append(on, fmt.Sprintf("%s %s", st.name, st.took.Round(time.Second)))
		}
	}
	if len(on) == 0 {
		return "images ready: every step was cached"
	}
	line := fmt.Sprintf("images ready after %s on the critical path: %s", total.Round(time.Second), strings.Join(on, " → "))
	var beside []string
	s.mu.Lock()
	for _, st := range s.list {
		if !onPath[st.name] && st.took >= time.Second {
			beside = append(beside, fmt.Sprintf("%s %s", st.name, st.took.Round(time.Second)))
		}
	}
	s.mu.Unlock()
	if len(beside) > 0 {
		line += "; beside it: " + strings.Join(beside, ", ")
	}
	return line
}
