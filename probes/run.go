package probes

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/wait"
)

// RunInput configures one full probe of a cluster.
type RunInput struct {
	Config          *rest.Config
	PoolLabel       string        // node label naming pools; nodes without it form pool "(none)"
	NamespacePrefix string        // probe pods go to a namespace made from it and removed after
	SchedulerURL    string        // optional kube-scheduler /metrics URL
	Freshness       time.Duration // pools whose every node's lease is older are not probed with pods
	Progress        func(format string, args ...any)
}

// PoolProbe is one probe pod's outcome on one pool.
type PoolProbe struct {
	Pool     string        `json:"pool"`
	Feature  string        `json:"feature"` // "" for the control
	Declares bool          `json:"declares"`
	Bound    bool          `json:"bound"`
	Node     string        `json:"node,omitempty"`
	Message  string        `json:"message,omitempty"`
	Decision time.Duration `json:"decisionNanos"`
}

// PoolUpdate is one update probe's outcome on one pool.
type PoolUpdate struct {
	Pool     string `json:"pool"`
	Feature  string `json:"feature"` // "" for the control
	Declares bool   `json:"declares"`
	Code     int32  `json:"code"`
	Message  string `json:"message,omitempty"`
}

// Run is everything one probe saw.
type Run struct {
	ServerVersion string              `json:"serverVersion"`
	APIServer     Gates               `json:"apiServerGates"`
	Scheduler     Gates               `json:"schedulerGates,omitempty"`
	Declarations  []Declaration       `json:"declarations"`
	Placements    []PoolProbe         `json:"placements"`
	Updates       []PoolUpdate        `json:"updates"`
	Started       time.Time           `json:"started"`
	Took          time.Duration       `json:"tookNanos"`
	Pools         map[string][]string `json:"pools"`                   // pool -> nodes
	Unprobed      []string            `json:"unprobedPools,omitempty"` // all nodes stale: no pods placed
}

// PermissionError names the verb and resource the identity lacks.
type PermissionError struct{ Verb, Resource, Subresource string }

func (e *PermissionError) Error() string {
	r := e.Resource
	if e.Subresource != "" {
		r += "/" + e.Subresource
	}
	return fmt.Sprintf("missing permission: %s %s (see config/rbac/probe.yaml)", e.Verb, r)
}

// Probe runs every probe against the cluster: declarations and gates,
// then placement and update probes per pool in its own namespace. It
// never writes to Node objects.
func Probe(ctx context.Context, in RunInput) (*Run, error) {
	say := in.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	cs, err := kubernetes.NewForConfig(in.Config)
	if err != nil {
		return nil, err
	}
	run := &Run{Started: time.Now(), Pools: map[string][]string{}}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cluster unreachable: %w", err)
	}
	run.ServerVersion = v.GitVersion
	if err := checkPermissions(ctx, cs); err != nil {
		return nil, err
	}
	say("reading gates and declarations of every node")
	if run.APIServer, err = APIServerGates(ctx, cs); err != nil {
		return nil, err
	}
	if in.SchedulerURL != "" {
		if run.Scheduler, err = SchedulerGates(ctx, in.Config, in.SchedulerURL); err != nil {
			return nil, err
		}
	}
	if run.Declarations, err = Declarations(ctx, DeclarationsInput{Clientset: cs, PoolLabel: in.PoolLabel}); err != nil {
		return nil, err
	}
	poolDecl := map[string][]string{}
	fresh := map[string]bool{}
	for i := range run.Declarations {
		d := &run.Declarations[i]
		if d.Pool == "" {
			d.Pool = "(none)"
		}
		run.Pools[d.Pool] = append(run.Pools[d.Pool], d.Node)
		poolDecl[d.Pool] = d.Declared
		if in.Freshness == 0 || d.HeartbeatAge <= in.Freshness {
			fresh[d.Pool] = true
		}
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: in.NamespacePrefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create probe namespace: %w", err)
	}
	defer func() {
		// Also on Ctrl-C: the probe namespace must not outlive the probe.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait.MustGet(wait.NamespaceGone).Timeout)
		defer cancel()
		say("removing namespace %s", ns.Name)
		_ = cs.CoreV1().Namespaces().Delete(cctx, ns.Name, metav1.DeleteOptions{})
	}()
	if err := wait.ForDefaultServiceAccount(ctx, cs, ns.Name); err != nil {
		return nil, err
	}
	cpMinor := kubeversion.MinorOf(run.ServerVersion)
	say("placement and update probes on %d pools in namespace %s", len(run.Pools), ns.Name)
	// Pools are probed at once: each probe waits on its own pods.
	type poolResult struct {
		placements []PoolProbe
		updates    []PoolUpdate
		err        error
	}
	results := make([]poolResult, len(run.Pools))
	var wg sync.WaitGroup
	for i, pool := range sortedPools(run.Pools) {
		if !fresh[pool] {
			say("pool %s: every node is stale, no pods are placed there", pool)
			run.Unprobed = append(run.Unprobed, pool)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &results[i]
			pr.placements, pr.err = placeAll(ctx, cs, ns.Name, in.PoolLabel, pool, poolDecl[pool], cpMinor, run.APIServer)
			if pr.err == nil {
				pr.updates, pr.err = updateAll(ctx, cs, ns.Name, in.PoolLabel, pool, poolDecl[pool], cpMinor, run.APIServer)
			}
		}()
	}
	wg.Wait()
	for _, pr := range results {
		if pr.err != nil {
			return run, pr.err
		}
		run.Placements = append(run.Placements, pr.placements...)
		run.Updates = append(run.Updates, pr.updates...)
	}
	run.Took = time.Since(run.Started)
	return run, nil
}

func sortedPools(m map[string][]string) []string {
	var out []string
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func placeAll(ctx context.Context, cs kubernetes.Interface, ns, label, pool string, declared []string, cpMinor string, api Gates) ([]PoolProbe, error) {
	var out []PoolProbe
	try := func(feature string, shape func(*corev1.Pod)) error {
		pod := fixtures.BasePod(podName("p", pool, len(out)), label, pool)
		if pool == "(none)" {
			pod.Spec.Affinity = nil
		}
		shape(pod)
		res, err := Place(ctx, cs, ns, pod)
		if err != nil {
			return err
		}
		out = append(out, PoolProbe{Pool: pool, Feature: feature, Declares: feature == "" || slices.Contains(declared, feature),
			Bound: res.Node != "", Node: res.Node, Message: res.Message, Decision: res.Decision})
		return nil
	}
	if err := try("", func(*corev1.Pod) {}); err != nil {
		return nil, err
	}
	for _, p := range fixtures.SchedulingProbes(cpMinor) {
		if !api.Enabled(p.APIServerGate) {
			continue
		}
		if err := try(p.Feature, p.Apply); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func updateAll(ctx context.Context, cs kubernetes.Interface, ns, label, pool string, declared []string, cpMinor string, api Gates) ([]PoolUpdate, error) {
	var out []PoolUpdate
	try := func(feature string, shape func(*corev1.Pod), sub string, patch []byte) error {
		name := podName("u", pool, len(out))
		pod := fixtures.BasePod(name, label, pool)
		if pool == "(none)" {
			pod.Spec.Affinity = nil
		}
		shape(pod)
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			if apierrors.IsForbidden(err) {
				return &PermissionError{Verb: "create", Resource: "pods"}
			}
			return err
		}
		if _, err := wait.ForPodRunning(ctx, cs, ns, name); err != nil {
			return err
		}
		res, err := Update(ctx, cs, ns, name, sub, patch)
		if err != nil {
			return err
		}
		out = append(out, PoolUpdate{Pool: pool, Feature: feature, Declares: feature == "" || slices.Contains(declared, feature), Code: res.Code, Message: res.Message})
		return nil
	}
	for _, c := range fixtures.ControlUpdates() {
		if err := try("", c.Apply, c.Subresource, c.Patch); err != nil {
			return nil, err
		}
	}
	if !api.Enabled(fixtures.NodeDeclaredFeatures) {
		return out, nil
	}
	for _, u := range fixtures.UpdateProbes(cpMinor) {
		if !api.Enabled(u.APIServerGate) {
			continue
		}
		if err := try(u.Feature, u.Apply, u.Subresource, u.Patch); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var unsafePodChars = regexp.MustCompile(`[^a-z0-9-]+`)

// podName is a valid, unique pod name for a pool's i-th probe.
func podName(kind, pool string, i int) string {
	p := strings.Trim(unsafePodChars.ReplaceAllString(strings.ToLower(pool), "-"), "-")
	if len(p) > 40 {
		p = p[:40]
	}
	return fmt.Sprintf("%s-%s-%d", kind, p, i)
}

// needed are the permissions a probe uses (config/rbac/probe.yaml grants them).
var needed = []authzv1.ResourceAttributes{
	{Verb: "list", Resource: "nodes"},
	{Verb: "get", Resource: "nodes"},
	{Verb: "get", Resource: "serviceaccounts", Namespace: "ndfq-probe-check"},
	{Verb: "get", Resource: "nodes", Subresource: "proxy"},
	{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease"},
	{Verb: "create", Resource: "namespaces"},
	{Verb: "delete", Resource: "namespaces"},
	{Verb: "create", Resource: "pods", Namespace: "ndfq-probe-check"},
	{Verb: "patch", Resource: "pods", Subresource: "resize", Namespace: "ndfq-probe-check"},
	{Verb: "patch", Resource: "pods", Namespace: "ndfq-probe-check"},
	{Verb: "get", Resource: "pods", Namespace: "ndfq-probe-check"},
}

func checkPermissions(ctx context.Context, cs kubernetes.Interface) error {
	for _, attr := range needed {
		attr := attr
		rev, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("check permission %s %s: %w", attr.Verb, attr.Resource, err)
		}
		if !rev.Status.Allowed {
			return &PermissionError{Verb: attr.Verb, Resource: attr.Resource, Subresource: attr.Subresource}
		}
	}
	return nil
}
