// Package poll is ndfq's one way to wait: bounded, with the timeout and
// interval of a named entry in intervals.yaml, on e2e-framework's wait.For.
package poll

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"sigs.k8s.io/e2e-framework/klient/wait"
)

//go:embed intervals.yaml
var intervalsYAML []byte

// Interval is a wait's timeout and poll period.
type Interval struct{ Timeout, Every time.Duration }

var intervals = func() map[string]Interval {
	raw := map[string][]string{}
	if err := yaml.Unmarshal(intervalsYAML, &raw); err != nil {
		panic("poll: intervals.yaml: " + err.Error())
	}
	out := map[string]Interval{}
	for name, pair := range raw {
		iv, err := parsePair(pair)
		if err != nil {
			panic(fmt.Sprintf("poll: intervals.yaml %s: %v", name, err))
		}
		out[name] = iv
	}
	return out
}()

func parsePair(pair []string) (Interval, error) {
	if len(pair) != 2 {
		return Interval{}, fmt.Errorf("want [timeout, interval], got %v", pair)
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
		return Interval{}, fmt.Errorf("want 0 < interval <= timeout, got %v", pair)
	}
	return Interval{Timeout: t, Every: e}, nil
}

// Get returns the named interval (the default one for unknown names),
// overridden by NDFQ_INTERVAL_<NAME>.
func Get(name string) Interval {
	env := "NDFQ_INTERVAL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if v := os.Getenv(env); v != "" {
		if iv, err := parsePair(strings.Split(v, ",")); err == nil {
			return iv
		}
	}
	if iv, ok := intervals[name]; ok {
		return iv
	}
	return intervals["default"]
}

// Until polls cond with the named interval until it returns true, an
// error, or the timeout; the error then says what was awaited and the
// last reason cond gave.
func Until(ctx context.Context, name, what string, cond func(ctx context.Context) (done bool, reason string, err error)) error {
	iv := Get(name)
	last := "not checked yet"
	var condErr error
	err := wait.For(func(ctx context.Context) (bool, error) {
		done, reason, err := cond(ctx)
		if reason != "" {
			last = reason
		}
		condErr = err
		return done, err
	}, wait.WithContext(ctx), wait.WithTimeout(iv.Timeout), wait.WithInterval(iv.Every), wait.WithImmediate())
	if err != nil {
		if condErr != nil {
			return fmt.Errorf("waiting for %s: %w", what, condErr)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for %s: %w (last: %s)", what, ctx.Err(), last)
		}
		return fmt.Errorf("waiting for %s: not done within %s (%s): %s", what, iv.Timeout, name, last)
	}
	return nil
}
