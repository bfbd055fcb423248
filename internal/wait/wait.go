// Package wait is ndfq's one way to wait, and what it waits for: bounded
// polls with the timeout and interval of a named entry in intervals.yaml
// (on e2e-framework's wait.For), and node and pod readiness. clusters/,
// probes/ and the suites all import it; it imports nothing of ndfq.
package wait

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	kwait "sigs.k8s.io/e2e-framework/klient/wait"
)

// Name is an entry of intervals.yaml.
type Name string

// Every wait ndfq makes, by name; intervals.yaml gives each its bounds.
const (
	Default       Name = "default"
	PodCIDRs      Name = "wait-pod-cidrs"
	Nodes         Name = "wait-nodes"
	API           Name = "wait-api"
	Metrics       Name = "wait-metrics"
	Scheduling    Name = "wait-scheduling"
	PodRunning    Name = "wait-pod-running"
	NamespaceGone Name = "wait-namespace-gone"
	PodsGone      Name = "wait-pods-gone"
	KubeletSync   Name = "wait-kubelet-sync"
	ProbeJob      Name = "wait-probe-job"
	// BenchBatch is a scheduler bench placing one batch of pods on a fleet.
	BenchBatch Name = "wait-bench-batch"
	// RuleWindow is how long a sibling is watched for a restart a container
	// restart rule would cause; its timeout is the window, not a wait.
	RuleWindow Name = "watch-restart-rule"
	// ForgeryWindow is how long forged declarations on silent kubelets are
	// watched for a kubelet clearing them; its timeout is the window.
	ForgeryWindow Name = "watch-forgery"
	// CellPass bounds the suite's pass: every non-disruptive cell observed at once.
	CellPass Name = "wait-cell-pass"
	// AlertFires is the signals claim's bound: from the pass's end to a
	// shipped alert firing (the refusals' alert waits 1m by its rule).
	AlertFires Name = "wait-alert-fires"
	// StreamOp bounds one exec, attach, port-forward or logs of a pod.
	StreamOp Name = "wait-stream-op"
	// QueueingNudge is how long pods refused for lack of a feature are
	// watched after an update of their node that declares nothing new.
	QueueingNudge Name = "watch-queueing-nudge"
	// QueueingBind is the queueing claim's bound: from the node declaring
	// the feature to the waiting pod bound (the scheduler's backoff is
	// minutes).
	QueueingBind Name = "wait-queueing-bind"
	// RuntimeStale is how long a node whose runtime was upgraded under a
	// running kubelet is watched for its declarations to change (they
	// must not: the kubelet reads runtime features once, at start).
	RuntimeStale Name = "watch-runtime-stale"
)

// Names lists every interval name, as intervals.yaml must have them.
var Names = []Name{Default, PodCIDRs, Nodes, API, Metrics, Scheduling, PodRunning, NamespaceGone, PodsGone, KubeletSync, ProbeJob, BenchBatch, RuleWindow, ForgeryWindow, CellPass, AlertFires, StreamOp, QueueingNudge, QueueingBind, RuntimeStale}

//go:embed intervals.yaml
var intervalsYAML []byte

// Interval is a wait's timeout and poll period. A window that defines a
// claim (how long something must not happen, or the most time it may
// take) also has a floor and a ceiling, Min and Max, that an override
// must stay within: outside them the claim would say something else.
type Interval struct{ Timeout, Every, Min, Max time.Duration }

// entry is an intervals.yaml entry: [timeout, interval], or for a claim's
// window {window: [timeout, interval], min: D, max: D}.
type entry struct {
	Window []string `yaml:"window"`
	Min    string   `yaml:"min"`
	Max    string   `yaml:"max"`
}

var intervals = func() map[Name]Interval {
	raw := map[Name]yaml.Node{}
	if err := yaml.Unmarshal(intervalsYAML, &raw); err != nil {
		panic("wait: intervals.yaml: " + err.Error())
	}
	out := map[Name]Interval{}
	for name, node := range raw {
		iv, err := parseEntry(&node)
		if err != nil {
			panic(fmt.Sprintf("wait: intervals.yaml %s: %v", name, err))
		}
		out[name] = iv
	}
	return out
}()

func parseEntry(node *yaml.Node) (Interval, error) {
	var e entry
	if node.Kind == yaml.SequenceNode {
		if err := node.Decode(&e.Window); err != nil {
			return Interval{}, err
		}
		return parsePair(e.Window)
	}
	if err := node.Decode(&e); err != nil {
		return Interval{}, err
	}
	iv, err := parsePair(e.Window)
	if err != nil {
		return Interval{}, err
	}
	if iv.Min, err = time.ParseDuration(e.Min); err != nil {
		return Interval{}, fmt.Errorf("min: %w", err)
	}
	if iv.Max, err = time.ParseDuration(e.Max); err != nil {
		return Interval{}, fmt.Errorf("max: %w", err)
	}
	if !iv.within(iv.Timeout) {
		return Interval{}, fmt.Errorf("window %s is not between min %s and max %s", iv.Timeout, iv.Min, iv.Max)
	}
	return iv, nil
}

// within says whether a window of d keeps the claim it defines.
func (iv Interval) within(d time.Duration) bool {
	return iv.Max == 0 || (d >= iv.Min && d <= iv.Max)
}

func parsePair(pair []string) (Interval, error) {
	if len(pair) != 2 {
		return Interval{}, fmt.Errorf("want timeout,interval, got %q", strings.Join(pair, ","))
	}
	t, err := time.ParseDuration(strings.TrimSpace(pair[0]))
	if err != nil {
		return Interval{}, err
	}
	e, err := time.ParseDuration(strings.TrimSpace(pair[1]))
	if err != nil {
		return Interval{}, err
	}
	if t <= 0 || e <= 0 || e > t {
		return Interval{}, fmt.Errorf("want 0 < interval <= timeout, got %q", strings.Join(pair, ","))
	}
	return Interval{Timeout: t, Every: e}, nil
}

const envPrefix = "NDFQ_INTERVAL_"

// EnvVar is the variable that overrides a named interval.
func EnvVar(name Name) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(string(name), "-", "_"))
}

// ForTest sets a named interval for one test, past any floor: a unit
// test's fake cluster answers in milliseconds, which a real claim's
// window never may.
func ForTest(tb testing.TB, name Name, iv Interval) {
	tb.Helper()
	testIntervals.Store(name, iv)
	tb.Cleanup(func() { testIntervals.Delete(name) })
}

var testIntervals sync.Map

// Get is the named interval, overridden by its NDFQ_INTERVAL_<NAME>. An
// unknown name or a malformed override is an error, never a silent default.
func Get(name Name) (Interval, error) {
	if iv, ok := testIntervals.Load(name); ok {
		return iv.(Interval), nil
	}
	iv, ok := intervals[name]
	if !ok {
		return Interval{}, fmt.Errorf("no interval %q in intervals.yaml (known: %s)", name, known())
	}
	if v := os.Getenv(EnvVar(name)); v != "" {
		o, err := parsePair(strings.Split(v, ","))
		if err != nil {
			return Interval{}, fmt.Errorf("%s=%q: %w (e.g. %s=10m,5s)", EnvVar(name), v, err, EnvVar(name))
		}
		if !iv.within(o.Timeout) {
			return Interval{}, fmt.Errorf("%s=%q: %s defines a claim: its window must be between %s and %s (intervals.yaml)", EnvVar(name), v, name, iv.Min, iv.Max)
		}
		o.Min, o.Max = iv.Min, iv.Max
		return o, nil
	}
	return iv, nil
}

// MustGet is Get for the constants above, whose entries intervals.yaml has
// (a unit test holds the two together); a malformed override still panics
// with its message, so CheckOverrides should run first.
func MustGet(name Name) Interval {
	iv, err := Get(name)
	if err != nil {
		panic(err)
	}
	return iv
}

// CheckOverrides refuses every NDFQ_INTERVAL_* variable that names no
// interval or does not parse: commands and suites call it before they start.
func CheckOverrides() error {
	var problems []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, envPrefix) {
			continue
		}
		i := slices.IndexFunc(Names, func(n Name) bool { return EnvVar(n) == k })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s names no interval (known: %s)", k, knownVars()))
			continue
		}
		if _, err := Get(Names[i]); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// Overrides are the NDFQ_INTERVAL_* variables set, as NAME=VALUE, sorted:
// a report says which waits and windows were not intervals.yaml's.
func Overrides() []string {
	var out []string
	for _, n := range Names {
		if v := os.Getenv(EnvVar(n)); v != "" {
			out = append(out, EnvVar(n)+"="+v)
		}
	}
	slices.Sort(out)
	return out
}

// knownVars lists the variables as they are set.
func knownVars() string {
	var s []string
	for _, n := range Names {
		s = append(s, EnvVar(n))
	}
	return strings.Join(s, ", ")
}

func known() string {
	var s []string
	for _, n := range Names {
		s = append(s, string(n))
	}
	return strings.Join(s, ", ")
}

// ErrNotDone is in Until's error when the timeout passed: a caller that
// watches a window for something that must not happen tells it apart.
var ErrNotDone = errors.New("not done")

// Until polls cond with the named interval until it returns true, an
// error, or the timeout; the error then says what was awaited and the
// last reason cond gave.
func Until(ctx context.Context, name Name, what string, cond func(ctx context.Context) (done bool, reason string, err error)) error {
	iv, err := Get(name)
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	last := "not checked yet"
	var condErr error
	err = kwait.For(func(ctx context.Context) (bool, error) {
		done, reason, err := cond(ctx)
		if reason != "" {
			last = reason
		}
		condErr = err
		return done, err
	}, kwait.WithContext(ctx), kwait.WithTimeout(iv.Timeout), kwait.WithInterval(iv.Every), kwait.WithImmediate())
	if err != nil {
		if condErr != nil {
			return fmt.Errorf("waiting for %s: %w", what, condErr)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for %s: %w (last: %s)", what, ctx.Err(), last)
		}
		return fmt.Errorf("waiting for %s: %w within %s (%s): %s", what, ErrNotDone, iv.Timeout, name, last)
	}
	return nil
}

// Watch reads, every interval for the whole of the named window, what must
// not change in it (read records what it saw). It returns how many reads
// succeeded; a window with none is no evidence either way, so an error.
// A read cut by the window's own end is its end, not a failure to look.
func Watch(ctx context.Context, name Name, what string, read func(ctx context.Context) error) (reads int, err error) {
	iv, err := Get(name)
	if err != nil {
		return 0, fmt.Errorf("watching %s: %w", what, err)
	}
	wctx, cancel := context.WithTimeout(ctx, iv.Timeout)
	defer cancel()
	var last error
	for {
		if err := read(wctx); err == nil {
			reads++
		} else if wctx.Err() == nil {
			last = err
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return reads, fmt.Errorf("watching %s: %w", what, context.Cause(ctx))
			}
			if reads == 0 {
				return 0, fmt.Errorf("%s: not read once during the %s window (%s), so no evidence either way; last error: %w", what, iv.Timeout, name, last)
			}
			return reads, nil
		case <-time.After(iv.Every):
		}
	}
}
