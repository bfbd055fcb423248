package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// A pass observes the non-disruptive cells (placement, update, kubelet
// admission) all at once, before any spec runs: a pod per cell in one
// namespace, as the probe observes a pool. Each cell's spec then asserts
// its own observation, so a cell costs its pod's seconds, not a spec's
// namespace round trip. A cell the pass did not observe (not planned, or
// cut off by the pass's bound) is observed by its own spec the same way.

// Observation is what one cell's pod showed: its scheduling decision, its
// update's answer, or what its kubelet did with it.
type Observation struct {
	Cell string `json:"cell"`
	// Err is why the observation could not be made; the spec fails with it.
	Err       string            `json:"err,omitempty"`
	Node      string            `json:"node,omitempty"`
	Placement *probes.Placement `json:"placement,omitempty"`
	// Control is the same pool's control placement, where the cell has one.
	Control *probes.Placement    `json:"control,omitempty"`
	Update  *probes.UpdateResult `json:"update,omitempty"`
	// Resize is what a declaring kubelet did with an admitted update:
	// ResizeApplied or the kubelet's Infeasible message.
	Resize string `json:"resize,omitempty"`
	// SpecChanged says whether an admitted control update moved the pod's
	// generation, where the apiserver may drop what it asks.
	SpecChanged *bool          `json:"specChanged,omitempty"`
	Kubelet     *KubeletResult `json:"kubelet,omitempty"`
	Signal      *SignalResult  `json:"signal,omitempty"`
	Preemption  *Preemption    `json:"preemption,omitempty"`
	// Streams are the streaming operations' outcomes, in fixtures.StreamOps order.
	Streams []StreamOutcome `json:"streams,omitempty"`
	// Evidence is the pod and its events as last seen, under ARTIFACTS.
	Evidence string  `json:"evidence,omitempty"`
	Seconds  float64 `json:"seconds"`
	// InPass says the suite's pass made it (not the spec).
	InPass bool `json:"inPass,omitempty"`
}

// KubeletResult is what a kubelet did with a pod bound to it directly.
type KubeletResult struct {
	Seen      string           `json:"seen"`
	Admission probes.Admission `json:"admission"`
}

// ResizeApplied is Observation.Resize where the kubelet applied the update.
const ResizeApplied = "applied"

// ObserveFunc makes one cell's observation with a pod named pod in ns
// (cfg is cs's own, for streams a clientset cannot make). It runs in a
// goroutine beside the others of its pass: it returns what went wrong in
// Err and never calls Gomega or Ginkgo.
type ObserveFunc func(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, ns, pod string) Observation

type plannedCell struct {
	// around is set for a cell observed around the pass, not in it.
	around  AroundFunc
	key     string
	text    string // the spec's full text, as Ginkgo's focus matches it
	labels  []string
	order   int // longer observations start first
	observe ObserveFunc
	// group names cells one observation answers together ("" for none):
	// the pass makes it once for all of them.
	group string
}

var (
	planMu sync.Mutex
	plan   []plannedCell
)

// Plan puts a cell into the suite's pass, while Ginkgo builds the tree:
// text is its spec's own text (the containers' come from Ginkgo). order
// starts slower kinds of observation first.
func Plan(c claims.Cell, text string, order int, observe ObserveFunc) {
	PlanShared("", c, text, order, observe)
}

// PlanShared is Plan for a cell whose observation answers every cell
// planned with the same group: the pass observes once for all of them.
func PlanShared(group string, c claims.Cell, text string, order int, observe ObserveFunc) {
	r := CurrentTreeConstructionNodeReport()
	var labels []string
	for _, ls := range r.ContainerHierarchyLabels {
		labels = append(labels, ls...)
	}
	planMu.Lock()
	defer planMu.Unlock()
	plan = append(plan, plannedCell{key: c.Key(), text: strings.Join(append(slices.Clone(r.ContainerHierarchyTexts), text), " "),
		labels: labels, order: order, observe: observe, group: group})
}

// PlanAround puts a cell into the suite's pass that is observed around
// it, from the suite's Prometheus (signals): the pass starts Prometheus
// first when any such cell is selected.
func PlanAround(c claims.Cell, text string, around AroundFunc) {
	Plan(c, text, 0, nil)
	planMu.Lock()
	defer planMu.Unlock()
	plan[len(plan)-1].around = around
}

// passRuns are the selected cells by observation: a grouped cell joins
// the first run of its group, every other cell is a run of its own.
func passRuns(cells []plannedCell) [][]plannedCell {
	var runs [][]plannedCell
	first := map[string]int{}
	for _, c := range cells {
		if i, ok := first[c.group]; ok && c.group != "" {
			runs[i] = append(runs[i], c)
			continue
		}
		first[c.group] = len(runs)
		runs = append(runs, []plannedCell{c})
	}
	return runs
}

// selected is the planned cells whose specs this run's focus, skip and
// label filter let run (as Ginkgo decides it), slowest first.
func selected(suite string) ([]plannedCell, error) {
	cfg, _ := GinkgoConfiguration()
	var checks []func(plannedCell) bool
	if cfg.LabelFilter != "" {
		f, err := types.ParseLabelFilter(cfg.LabelFilter)
		if err != nil {
			return nil, err
		}
		checks = append(checks, func(p plannedCell) bool { return f(p.labels) })
	}
	if len(cfg.FocusStrings) > 0 {
		re, err := regexp.Compile(strings.Join(cfg.FocusStrings, "|"))
		if err != nil {
			return nil, err
		}
		checks = append(checks, func(p plannedCell) bool { return re.MatchString(suite + " " + p.text) })
	}
	if len(cfg.SkipStrings) > 0 {
		re, err := regexp.Compile(strings.Join(cfg.SkipStrings, "|"))
		if err != nil {
			return nil, err
		}
		checks = append(checks, func(p plannedCell) bool { return !re.MatchString(suite + " " + p.text) })
	}
	planMu.Lock()
	defer planMu.Unlock()
	var out []plannedCell
	for _, p := range plan {
		if !slices.ContainsFunc(checks, func(ok func(plannedCell) bool) bool { return !ok(p) }) {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b plannedCell) int { return b.order - a.order })
	return out, nil
}

// passWorkers bounds the pass's concurrent observations: enough to keep
// every kubelet busy, few enough that 2 cores still answer polls promptly.
const passWorkers = 24

// RunPass observes every selected planned cell at once, in one namespace
// that is deleted when the pass ends, and returns the observations by
// cell key. suite is the suite's description (Ginkgo's focus matches it).
// The pass is bounded by wait-cell-pass: cells it did not finish are
// left to their specs.
func RunPass(ctx context.Context, e *Env, suite string) (obs map[string]Observation, ns string, err error) {
	cells, err := selected(suite)
	if err != nil || len(cells) == 0 {
		return nil, "", err
	}
	cells, around := splitAround(cells)
	var span *PassSpan
	var promErr error
	if len(around) > 0 {
		// Without Prometheus only the signals cells fail, each with why.
		var prom *Prometheus
		if prom, promErr = e.StartPrometheus(ctx); promErr == nil {
			span = &PassSpan{Prom: prom, CPMinor: CPMinor(e.Topology)}
		}
	}
	start := time.Now()
	// Its own client: two dozen pollers would starve the default rate limit.
	rc := *e.Cluster.Client.RESTConfig()
	rc.QPS, rc.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(&rc)
	if err != nil {
		return nil, "", err
	}
	if ns, err = passNamespace(ctx, cs); err != nil {
		return nil, "", err
	}
	defer func() {
		// Its deletion starts before any spec runs: the safe order skips
		// pods of a terminating namespace, and the suite's end waits it gone.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait.MustGet(wait.PodsGone).Timeout)
		defer cancel()
		_ = cs.CoreV1().Pods(ns).DeleteCollection(dctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}, metav1.ListOptions{})
		_ = cs.CoreV1().Namespaces().Delete(dctx, ns, metav1.DeleteOptions{})
	}()
	bound := wait.MustGet(wait.CellPass).Timeout
	pctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	e.Log.Printf("pass: observing %d cells at once in namespace %s (at most %d at a time, bound %s)", len(cells), ns, passWorkers, bound)

	obs = map[string]Observation{}
	if promErr != nil {
		failAround(around, obs, promErr)
	}
	if span != nil {
		span.Start = time.Now()
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, passWorkers)
	for i, run := range passRuns(cells) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
			case <-pctx.Done():
				return
			}
			defer func() { <-slots }()
			t0, pod := time.Now(), fmt.Sprintf("cell-%03d", i)
			o := run[0].observe(pctx, cs, &rc, ns, pod)
			if pctx.Err() != nil {
				return // cut off by the bound: its specs observe it
			}
			o.InPass, o.Seconds = true, time.Since(t0).Seconds()
			o.Evidence = cellEvidence(pctx, cs, e.Settings.Artifacts, run[0].key, ns, pod)
			mu.Lock()
			for _, c := range run {
				o.Cell = c.key
				obs[c.key] = o
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	failed := 0
	for _, o := range obs {
		if o.Err != "" {
			failed++
		}
	}
	e.Log.Printf("pass: %d of %d cells observed in %s (%d could not be observed; their specs fail with why)", len(obs), len(cells), time.Since(start).Round(time.Second), failed)
	if span != nil {
		// Before the namespace goes: refused pods still wait, as an
		// operator's alert sees them.
		span.End, span.Obs = time.Now(), obs
		e.Log.Printf("pass: reading %d signals from the suite's Prometheus", len(around))
		observeAround(ctx, span, around, obs)
	}
	return obs, ns, nil
}

func passNamespace(ctx context.Context, cs kubernetes.Interface) (string, error) {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "ndfq-pass-",
		Labels:       map[string]string{"app.kubernetes.io/managed-by": "ndfq"},
	}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create the pass's namespace: %w", err)
	}
	if err := wait.ForDefaultServiceAccount(ctx, cs, ns.Name); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// WithPass runs the pass on the first process and adds its observations
// to what every process attaches with.
func WithPass(ctx context.Context, s Settings, data []byte, suite string, log *progress.Logger) ([]byte, error) {
	e, err := Attach(s, data, log)
	if err != nil {
		return nil, err
	}
	obs, ns, err := RunPass(ctx, e, suite)
	if err != nil {
		return nil, fmt.Errorf("pass: %w", err)
	}
	e.Shared.Observations, e.Shared.PassNamespace = obs, ns
	if len(obs) > 0 {
		// The pass's record beside each cell's evidence: what a reader of
		// ARTIFACTS sees without the suite's log.
		dir := filepath.Join(s.Artifacts, "cells")
		js, err := json.MarshalIndent(obs, "", "  ")
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "pass.json"), js, 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("pass: %w", err)
		}
	}
	return json.Marshal(e.Shared)
}

// Observed is the cell's observation: the pass's, or, where the pass did
// not make one, the spec's own with observe in a namespace of its own. An
// observation that could not be made fails the spec with why.
func (e *Env) Observed(ctx context.Context, c claims.Cell, observe ObserveFunc) Observation {
	GinkgoHelper()
	o, ok := e.Shared.Observations[c.Key()]
	if ok {
		By(fmt.Sprintf("observed in the suite's pass in %.1fs (evidence %s)", o.Seconds, o.Evidence))
	} else {
		By("observed by this spec: the suite's pass did not observe this cell")
		t0 := time.Now()
		ns := e.Namespace(ctx, "cell")
		o = observe(ctx, e.Clientset, e.Cluster.Client.RESTConfig(), ns, "cell")
		o.Cell, o.Seconds = c.Key(), time.Since(t0).Seconds()
		o.Evidence = cellEvidence(ctx, e.Clientset, e.Settings.Artifacts, c.Key(), ns, "cell")
	}
	if o.Evidence != "" {
		e.evidence.file(o.Evidence)
	}
	Expect(o.Err).To(BeEmpty(), "observing cell %s (evidence %s)", c.Key(), o.Evidence)
	return o
}
