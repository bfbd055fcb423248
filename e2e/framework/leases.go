package framework

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// LeaseGap is the time between two consecutive renewals of a node's Lease.
type LeaseGap struct {
	Node     string    `json:"node"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Duration int32     `json:"leaseDurationSeconds"`
}

// Seconds is the gap's length.
func (g LeaseGap) Seconds() float64 { return g.To.Sub(g.From).Seconds() }

// LateSeconds is how much later than planned the renewal came: the
// kubelet renews every quarter of the lease's duration.
func (g LeaseGap) LateSeconds() float64 { return g.Seconds() - float64(g.Duration)/4 }

// LeaseRecorder keeps every renewal gap of every node Lease while the
// suite runs: the measurement the node lifecycle periods are chosen from.
type LeaseRecorder struct {
	mu   sync.Mutex
	gaps []LeaseGap
	stop chan struct{}
}

// RecordLeaseRenewals watches kube-node-lease (an informer: it relists
// across apiserver restarts) until Stop.
func RecordLeaseRenewals(cs kubernetes.Interface) (*LeaseRecorder, error) {
	r := &LeaseRecorder{stop: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(corev1.NamespaceNodeLease))
	inf := f.Coordination().V1().Leases().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		o, ok1 := oldObj.(*coordinationv1.Lease)
		n, ok2 := newObj.(*coordinationv1.Lease)
		if !ok1 || !ok2 || o.Spec.RenewTime == nil || n.Spec.RenewTime == nil || !n.Spec.RenewTime.After(o.Spec.RenewTime.Time) {
			return
		}
		var d int32 = 40
		if n.Spec.LeaseDurationSeconds != nil {
			d = *n.Spec.LeaseDurationSeconds
		}
		r.mu.Lock()
		r.gaps = append(r.gaps, LeaseGap{Node: n.Name, From: o.Spec.RenewTime.Time, To: n.Spec.RenewTime.Time, Duration: d})
		r.mu.Unlock()
	}})
	if err != nil {
		return nil, err
	}
	f.Start(r.stop)
	return r, nil
}

// Stop ends the watch.
func (r *LeaseRecorder) Stop() {
	if r != nil {
		close(r.stop)
	}
}

// LeaseSummary is the worst renewal seen outside the excluded windows.
type LeaseSummary struct {
	Renewals int       `json:"renewals"`
	Nodes    int       `json:"nodes"`
	Excluded int       `json:"excludedRenewals"` // gaps overlapping a window that stops kubelets or control planes on purpose
	Worst    *LeaseGap `json:"worst,omitempty"`
}

// Summarize is the worst gap among those that overlap no window (the
// Disruptive specs' run times: there a kubelet or apiserver is down by design).
func (r *LeaseRecorder) Summarize(windows [][2]time.Time) LeaseSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s LeaseSummary
	nodes := map[string]bool{}
	for _, g := range r.gaps {
		if overlaps(g, windows) {
			s.Excluded++
			continue
		}
		s.Renewals++
		nodes[g.Node] = true
		if s.Worst == nil || g.Seconds() > s.Worst.Seconds() {
			g := g
			s.Worst = &g
		}
	}
	s.Nodes = len(nodes)
	return s
}

func overlaps(g LeaseGap, windows [][2]time.Time) bool {
	for _, w := range windows {
		if g.From.Before(w[1]) && g.To.After(w[0]) {
			return true
		}
	}
	return false
}

// Text says the measurement and the margin the grace period leaves.
func (s LeaseSummary) Text(grace time.Duration, graceSource string) string {
	if s.Worst == nil {
		return fmt.Sprintf("node Lease renewals: none seen outside Disruptive specs (%d inside them); node-monitor-grace-period %s (%s)", s.Excluded, grace, graceSource)
	}
	w := *s.Worst
	return fmt.Sprintf("node Lease renewals outside Disruptive specs: %d over %d nodes (%d inside them left out); worst gap %.1f s on %s at %s (lease %d s, renewed every %d s: %.1f s late); node-monitor-grace-period %s (%s) is %.1fx the worst gap",
		s.Renewals, s.Nodes, s.Excluded, w.Seconds(), w.Node, w.To.UTC().Format(time.RFC3339), w.Duration, w.Duration/4, w.LateSeconds(), grace, graceSource, grace.Seconds()/w.Seconds())
}

// DefaultNodeMonitorGracePeriod is kube-controller-manager's default
// --node-monitor-grace-period since 1.32.
const DefaultNodeMonitorGracePeriod = 50 * time.Second

// NodeMonitorGracePeriod is the controller-manager's grace period as its
// static pod sets it, and where the value comes from.
func NodeMonitorGracePeriod(ctx context.Context, cs kubernetes.Interface) (time.Duration, string) {
	pods, err := cs.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
	if err != nil || len(pods.Items) == 0 {
		return DefaultNodeMonitorGracePeriod, "kube-controller-manager not read; its default"
	}
	for _, arg := range pods.Items[0].Spec.Containers[0].Command {
		if v, ok := strings.CutPrefix(arg, "--node-monitor-grace-period="); ok {
			if d, err := time.ParseDuration(v); err == nil {
				return d, "set on kube-controller-manager"
			}
		}
	}
	return DefaultNodeMonitorGracePeriod, "kube-controller-manager's default"
}

// StaleFreshness is a --freshness that a NotReady node's Lease is always
// older than: the node turns NotReady a grace period after its last
// renewal, so three fifths of it leaves room for the clocks.
func StaleFreshness(ctx context.Context, cs kubernetes.Interface) string {
	g, _ := NodeMonitorGracePeriod(ctx, cs)
	return fmt.Sprintf("%ds", int(g.Seconds()*3/5))
}
