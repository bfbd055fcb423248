package wait

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEveryNameHasAnInterval(t *testing.T) {
	for _, name := range Names {
		if iv, err := Get(name); err != nil || iv.Timeout <= 0 || iv.Every <= 0 {
			t.Errorf("%s: %+v %v", name, iv, err)
		}
	}
	for name := range intervals {
		if !slices.Contains(Names, name) {
			t.Errorf("intervals.yaml has %s, which no constant names", name)
		}
	}
}

func TestEnvOverride(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_WAIT_NODES", "50ms,10ms")
	if iv := MustGet(Nodes); iv.Timeout != 50*time.Millisecond || iv.Every != 10*time.Millisecond {
		t.Errorf("got %+v", iv)
	}
}

func TestRefusesUnknownNamesAndMalformedOverrides(t *testing.T) {
	if _, err := Get("wait-nodez"); err == nil || !strings.Contains(err.Error(), `no interval "wait-nodez"`) {
		t.Errorf("unknown name: %v", err)
	}
	if err := Until(context.Background(), "wait-nodez", "x", func(context.Context) (bool, string, error) { return true, "", nil }); err == nil {
		t.Error("Until with an unknown name must fail, not fall back to the default")
	}
	for _, bad := range []string{"10m", "5s,10m", "ten,1s", "0s,0s"} {
		t.Setenv("NDFQ_INTERVAL_WAIT_NODES", bad)
		if _, err := Get(Nodes); err == nil || !strings.Contains(err.Error(), "NDFQ_INTERVAL_WAIT_NODES") {
			t.Errorf("override %q: %v", bad, err)
		}
		if err := CheckOverrides(); err == nil {
			t.Errorf("CheckOverrides accepted %q", bad)
		}
	}
	t.Setenv("NDFQ_INTERVAL_WAIT_NODES", "10m,5s")
	if err := CheckOverrides(); err != nil {
		t.Errorf("a good override: %v", err)
	}
	t.Setenv("NDFQ_INTERVAL_WAIT_NODS", "10m,5s")
	if err := CheckOverrides(); err == nil || !strings.Contains(err.Error(), "NDFQ_INTERVAL_WAIT_NODS names no interval") {
		t.Errorf("misspelt variable: %v", err)
	}
}

func TestUntilIsBoundedAndSaysWhy(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_DEFAULT", "100ms,10ms")
	start := time.Now()
	err := Until(context.Background(), Default, "the thing", func(context.Context) (bool, string, error) {
		return false, "still 2 of 3", nil
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for the thing: not done within 100ms (default): still 2 of 3") {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("the wait was not bounded")
	}
	boom := errors.New("boom")
	if err := Until(context.Background(), Default, "x", func(context.Context) (bool, string, error) { return false, "", boom }); !errors.Is(err, boom) {
		t.Errorf("a condition error must end the wait: %v", err)
	}
	if err := Until(context.Background(), Default, "x", func(context.Context) (bool, string, error) { return true, "", nil }); err != nil {
		t.Errorf("done at once: %v", err)
	}
}

// A window that defines a claim may be overridden only within its floor
// and ceiling: wait-queueing-bind=6m would let a scheduler that never
// requeues pass (its unschedulable pods are flushed after 5m).
func TestClaimWindowsAreBounded(t *testing.T) {
	for _, name := range []Name{QueueingBind, RuntimeStale, RuleWindow, ForgeryWindow, QueueingNudge, AlertFires} {
		iv := MustGet(name)
		if iv.Min <= 0 || iv.Max < iv.Min || iv.Timeout < iv.Min || iv.Timeout > iv.Max {
			t.Errorf("%s: %+v has no floor and ceiling around its window", name, iv)
		}
	}
	t.Setenv(EnvVar(QueueingBind), "6m,2s")
	if err := CheckOverrides(); err == nil || !strings.Contains(err.Error(), "NDFQ_INTERVAL_WAIT_QUEUEING_BIND=\"6m,2s\": wait-queueing-bind defines a claim: its window must be between") {
		t.Errorf("a window past its ceiling: %v", err)
	}
	t.Setenv(EnvVar(QueueingBind), "45s,2s")
	if err := CheckOverrides(); err != nil {
		t.Errorf("within bounds: %v", err)
	}
	if got := Overrides(); !slices.Equal(got, []string{"NDFQ_INTERVAL_WAIT_QUEUEING_BIND=45s,2s"}) {
		t.Errorf("overrides: %v", got)
	}
}

// The error lists the variables in the spelling they are set with.
func TestUnknownVariableNamesTheSpellings(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_WAIT_PODS_RUN", "1m,1s")
	if err := CheckOverrides(); err == nil || !strings.Contains(err.Error(), "known: NDFQ_INTERVAL_DEFAULT, ") || !strings.Contains(err.Error(), "NDFQ_INTERVAL_WAIT_POD_RUNNING") {
		t.Errorf("%v", err)
	}
}

// A window watched for something that must not happen counts the reads
// that succeeded, and one with none is no evidence: an error.
func TestWatchCountsReads(t *testing.T) {
	ForTest(t, QueueingNudge, Interval{Timeout: 200 * time.Millisecond, Every: 20 * time.Millisecond})
	reads, err := Watch(context.Background(), QueueingNudge, "the pods", func(context.Context) error { return nil })
	if err != nil || reads < 3 {
		t.Errorf("reads %d: %v", reads, err)
	}
	boom := errors.New("connection refused")
	reads, err = Watch(context.Background(), QueueingNudge, "the pods", func(context.Context) error { return boom })
	if reads != 0 || err == nil || !strings.Contains(err.Error(), "the pods: not read once during the 200ms window (watch-queueing-nudge), so no evidence either way; last error: connection refused") {
		t.Errorf("reads %d: %v", reads, err)
	}
}
