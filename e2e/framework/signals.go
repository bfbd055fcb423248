package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
)

// PassSpan is what a signals observation reads: the suite's Prometheus,
// the pass's start and end, and the pass's own observations, which say how
// many refusals and rejections each component gave in its own words.
type PassSpan struct {
	Prom       *Prometheus
	Start, End time.Time
	Obs        map[string]Observation
	CPMinor    string
}

// AroundFunc makes a signals observation once the pass has ended (its
// refused pods still waiting). Like ObserveFunc it never calls Gomega.
type AroundFunc func(ctx context.Context, span *PassSpan) Observation

// SignalResult is a series read around the pass, or an alert watched.
type SignalResult struct {
	Query    string  `json:"query"`
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	Want     int     `json:"want"`
	Seen     string  `json:"seen"`
	Detail   string  `json:"detail,omitempty"`
	Instance string  `json:"instance,omitempty"`
}

func splitAround(cells []plannedCell) (pass, around []plannedCell) {
	for _, c := range cells {
		if c.around != nil {
			around = append(around, c)
		} else {
			pass = append(pass, c)
		}
	}
	return pass, around
}

func observeAround(ctx context.Context, span *PassSpan, around []plannedCell, obs map[string]Observation) {
	if err := span.Prom.WaitScrapedAfter(ctx, span.End); err != nil {
		failAround(around, obs, err)
		return
	}
	for _, c := range around {
		t0 := time.Now()
		o := c.around(ctx, span)
		o.Cell, o.InPass, o.Seconds = c.key, true, time.Since(t0).Seconds()
		obs[c.key] = o
	}
}

// failAround gives each signals cell the suite's Prometheus's error.
func failAround(around []plannedCell, obs map[string]Observation, err error) {
	for _, c := range around {
		obs[c.key] = Observation{Cell: c.key, InPass: true, Err: "the suite's Prometheus: " + err.Error()}
	}
}

// poolOfKey is the pool of a cell key (kind/pool/feature).
func poolOfKey(key string) string {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// Refused counts the pass's pods refused in the plugin's words.
func (s *PassSpan) Refused() (n int, words string) {
	words = strings.TrimSuffix(strings.TrimSpace(fixtures.SchedulerRefusal(s.CPMinor, "")), ":")
	for _, o := range s.Obs {
		if p := o.Placement; p != nil && p.Node == "" && strings.Contains(p.Message, words) {
			n++
		}
	}
	return n, words
}

// Rejected counts the pass's updates rejected in the validator's words.
func (s *PassSpan) Rejected() int {
	const words = "pod update requires features"
	n := 0
	for _, o := range s.Obs {
		if u := o.Update; u != nil && u.Code == 403 && strings.Contains(u.Message, words) {
			n++
		}
	}
	return n
}

// KubeletRejected counts, per node, the pass's pods a kubelet of pool
// ("" any) rejected for a feature its node lacks.
func (s *PassSpan) KubeletRejected(pool string) map[string]int {
	perNode := map[string]int{}
	for key, o := range s.Obs {
		if k := o.Kubelet; k != nil && (pool == "" || poolOfKey(key) == pool) && k.Admission.Reason == fixtures.KubeletRejectionReason {
			perNode[o.Node]++
		}
	}
	return perNode
}

// counted reads a series' sum at the pass's start and end (a labelled
// counter exists from its first increment: absent is 0).
func (s *PassSpan) counted(ctx context.Context, query string, want int) Observation {
	from, err := s.Prom.Sum(ctx, query, s.Start)
	if err != nil {
		return Observation{Err: err.Error()}
	}
	to, err := s.Prom.Sum(ctx, query, time.Now())
	if err != nil {
		return Observation{Err: err.Error()}
	}
	return Observation{Signal: &SignalResult{Query: query, From: from, To: to, Want: want, Seen: claims.CountedSeen(from, to, want)}}
}

// ObserveSchedulerRefusals: the scheduler's gauge of pods the plugin left
// unschedulable held every refusal of the pass in the plugin's words.
// Refused pods wait until the pass's namespace goes, so the gauge's
// highest during the pass holds them all (what waited before is no part
// of it: a gauge, not a count).
func ObserveSchedulerRefusals() AroundFunc {
	return func(ctx context.Context, s *PassSpan) Observation {
		want, words := s.Refused()
		sel := fmt.Sprintf(`sum(%s{%s,profile="default-scheduler"})`, fixtures.SignalSchedulerRefusals.Name, fixtures.SignalSchedulerRefusals.Selector)
		from, err := s.Prom.Sum(ctx, sel, s.Start)
		if err != nil {
			return Observation{Err: err.Error()}
		}
		window := time.Since(s.Start).Round(time.Second) + time.Second
		peak := fmt.Sprintf("max_over_time(%s[%ds:5s])", sel, int(window.Seconds()))
		to, err := s.Prom.Sum(ctx, peak, time.Now())
		if err != nil {
			return Observation{Err: err.Error()}
		}
		detail := fmt.Sprintf("%d pods of the pass refused in the plugin's words (%q)", want, words)
		if to < float64(want) {
			// A refused pod leaves the gauge while the scheduler retries it
			// (a cluster event moves it to the backoff queue) and is back once
			// refused again: the 5-s samples can miss the moment all are in.
			// They all still wait, so the gauge must come to hold them all.
			now, _ := s.Prom.WaitAtLeast(ctx, sel, float64(want))
			detail += fmt.Sprintf("; the pass's samples held at most %g, then %s held %g", to, sel, now)
			to = max(to, now) // what it held once the wait ended, met or not
		}
		return Observation{Signal: &SignalResult{Query: peak, From: from, To: to, Want: want, Seen: claims.HeldSeen(to, want), Detail: detail}}
	}
}

// ObserveValidatorRejections: the validator's rejection counter, summed
// over every apiserver, rose by every 403 of the pass in its words; the
// detail names each apiserver's part.
func ObserveValidatorRejections() AroundFunc {
	return func(ctx context.Context, s *PassSpan) Observation {
		want := s.Rejected()
		series := fixtures.SignalValidatorRejections.Series()
		o := s.counted(ctx, "sum("+series+")", want)
		if o.Signal != nil {
			o.Signal.Detail = fmt.Sprintf("%d updates of the pass rejected in the validator's words; by apiserver: %s", want, s.byInstance(ctx, series))
		}
		return o
	}
}

// byInstance describes a counter's rise on each scraped instance.
func (s *PassSpan) byInstance(ctx context.Context, series string) string {
	was, err1 := s.Prom.SumByInstance(ctx, series, s.Start)
	now, err2 := s.Prom.SumByInstance(ctx, series, time.Now())
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("unread (%v %v)", err1, err2)
	}
	var parts []string
	for i, v := range now {
		parts = append(parts, fmt.Sprintf("%s +%g", i, v-was[i]))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// ObserveKubeletRejections: on each node of the pool where the pass saw
// its kubelet reject a pod (PodFeatureUnsupported), that kubelet's own
// counter rose by as many.
func ObserveKubeletRejections(pool string) AroundFunc {
	return func(ctx context.Context, s *PassSpan) Observation {
		perNode := s.KubeletRejected(pool)
		var nodes []string
		want := 0
		for n, c := range perNode {
			nodes, want = append(nodes, n), want+c
		}
		sort.Strings(nodes)
		if want == 0 {
			return Observation{Err: "the pass saw no kubelet of " + pool + " reject a pod (was its kubelet-admission cell selected?): nothing to count"}
		}
		sig := fixtures.SignalKubeletRejections
		query := fmt.Sprintf(`sum(%s{%s,node=~"%s"})`, sig.Name, sig.Selector, strings.Join(nodes, "|"))
		o := s.counted(ctx, query, want)
		if o.Signal != nil {
			o.Signal.Detail = fmt.Sprintf("rejections the pass saw per node: %v", perNode)
		}
		return o
	}
}

// ObserveAlert: the shipped alert was not firing at the pass's start and
// fires (wait-alert-fires) while the pass's refused pods still wait;
// events counts what the pass gave it to fire on (none: the cell fails at
// once, naming why).
func ObserveAlert(name string, events func(*PassSpan) int) AroundFunc {
	return func(ctx context.Context, s *PassSpan) Observation {
		if events(s) == 0 {
			return Observation{Err: "the pass gave " + name + " nothing to fire on (were the cells it counts selected?)"}
		}
		firing := firingQuery(name)
		before, err := s.Prom.Vector(ctx, firing, s.Start)
		if err != nil {
			return Observation{Err: err.Error()}
		}
		res := &SignalResult{Query: firing, From: float64(len(before)), Want: 1}
		if len(before) > 0 {
			res.Seen = fmt.Sprintf("already firing at the pass's start: %v", before)
			return Observation{Signal: res}
		}
		fired, err := s.Prom.WaitFiring(ctx, name, nil)
		res.To = float64(len(fired))
		if err != nil {
			res.Seen = fmt.Sprintf("silent before the pass, and not firing %s after it", wait.MustGet(wait.AlertFires).Timeout)
			return Observation{Signal: res}
		}
		firedAt := time.Now()
		res.Seen = claims.Fired
		res.Detail = fmt.Sprintf("firing %s after the pass's start", firedAt.Sub(s.Start).Round(time.Second))
		return Observation{Signal: res}
	}
}
