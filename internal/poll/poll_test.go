package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestIntervalsFileIsValid(t *testing.T) {
	for _, name := range []string{"default", "wait-nodes", "wait-scheduling"} {
		if iv := Get(name); iv.Timeout <= 0 || iv.Every <= 0 {
			t.Errorf("%s: %+v", name, iv)
		}
	}
}

func TestEnvOverride(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_WAIT_NODES", "50ms,10ms")
	if iv := Get("wait-nodes"); iv.Timeout != 50*time.Millisecond || iv.Every != 10*time.Millisecond {
		t.Errorf("got %+v", iv)
	}
}

func TestUntilIsBoundedAndSaysWhy(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_TEST", "100ms,10ms")
	start := time.Now()
	err := Until(context.Background(), "test", "the thing", func(context.Context) (bool, string, error) {
		return false, "still 2 of 3", nil
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for the thing: not done within 100ms (test): still 2 of 3") {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("the wait was not bounded")
	}
	boom := errors.New("boom")
	if err := Until(context.Background(), "test", "x", func(context.Context) (bool, string, error) { return false, "", boom }); !errors.Is(err, boom) && !strings.Contains(err.Error(), "boom") {
		t.Errorf("a condition error must end the wait: %v", err)
	}
	if err := Until(context.Background(), "test", "x", func(context.Context) (bool, string, error) { return true, "", nil }); err != nil {
		t.Errorf("done at once: %v", err)
	}
}
