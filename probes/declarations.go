package probes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// Declaration is what one node publishes next to what its kubelet must
// publish according to the oracle, for the kubelet's minor and the gates
// the kubelet itself reports (never the topology's intent).
type Declaration struct {
	Node           string
	Pool           string
	Labels         map[string]string `json:"-"` // the node's, for a plan's pool selectors
	KubeletVersion string
	Published      bool     // status.declaredFeatures is present
	Declared       []string // as stored, in order
	Expected       []string // the oracle's sorted set
	Missing        []string // expected, not declared
	Extra          []string // declared, not expected
	Digest         string   // of the declared set
	Gates          Gates    // the kubelet's effective gates
	CPUManager     string   // the kubelet's cpuManagerPolicy (configz)
	// Runtime is the node's containerRuntimeVersion; RuntimeFrom says
	// where the runtime's CRI features came from: "cri" (read from the
	// runtime by the caller), "release" (the oracle's runtime table) or
	// "unknown" (a runtime the oracle does not know).
	Runtime     string
	RuntimeFrom string
	// RuntimeEndpoint is the kubelet's containerRuntimeEndpoint (configz);
	// RuntimeUnread says why the CRI was not read there, where it was asked.
	RuntimeEndpoint string
	RuntimeUnread   string
	// RuntimeReport is what the judgement took the runtime to report, in
	// the CRI's words (nil where RuntimeFrom is unknown).
	RuntimeReport []string
	// Undecided are features whose declaration depends on runtime features
	// nobody could read (RuntimeFrom unknown, or what a CRI read cannot
	// see): neither missing nor extra.
	Undecided []string
	// HeartbeatAge is how long ago the node's Lease was renewed. Without a
	// Lease (NoLease) it is the age of the Ready condition's heartbeat, 0
	// where there is none: freshness is then unknown, never assumed.
	HeartbeatAge time.Duration
	NoLease      bool
	Unreachable  string // why the kubelet's gates could not be read; nothing is expected then
	Unchecked    string // why the kubelet was not asked (no permission); nothing is expected then
	NotSampled   bool   // the kubelet was left out of the sample (--kubelet-sample); nothing is expected then
}

// Matches is true when the declared set is exactly the expected one.
func (d Declaration) Matches() bool {
	return d.Unreachable == "" && d.Unchecked == "" && !d.NotSampled && len(d.Missing) == 0 && len(d.Extra) == 0
}

// DeclarationsInput says which nodes to look at.
type DeclarationsInput struct {
	Clientset kubernetes.Interface
	PoolLabel string        // node label naming the pool (ndfq.io/pool)
	Nodes     []corev1.Node // these nodes instead of every node
	// SkipKubelet, when set, says why kubelets are not asked for their
	// gates (the identity may not use the node proxy).
	SkipKubelet string
	// Sample, when not nil, names the only nodes whose kubelets are asked.
	Sample map[string]bool
	// Runtimes, where the caller could read them, are what each node's
	// runtime reports over the CRI, by node name; other nodes' runtimes
	// are looked up by their containerRuntimeVersion.
	Runtimes map[string]fixtures.Runtime
}

// kubeletReads is how many kubelets are asked at once through the proxy.
const kubeletReads = 8

// Declarations reads every node's declaration, its kubelet's gates and
// configuration through the node proxy, and its lease's age.
func Declarations(ctx context.Context, in DeclarationsInput) ([]Declaration, error) {
	nodes := in.Nodes
	if nodes == nil {
		list, err := in.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		nodes = list.Items
	}
	renewed := map[string]time.Time{}
	leases, err := in.Clientset.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list node leases: %w", err)
	}
	for _, l := range leases.Items {
		if l.Spec.RenewTime != nil {
			renewed[l.Name] = l.Spec.RenewTime.Time
		}
	}
	out := make([]Declaration, len(nodes))
	var g errgroup.Group
	g.SetLimit(kubeletReads)
	for i, n := range nodes {
		d := &out[i]
		*d = Declaration{
			Node: n.Name, Pool: n.Labels[in.PoolLabel], Labels: n.Labels, KubeletVersion: n.Status.NodeInfo.KubeletVersion,
			Published: n.Status.DeclaredFeatures != nil, Declared: n.Status.DeclaredFeatures,
			Digest: fixtures.Digest(n.Status.DeclaredFeatures), Runtime: n.Status.NodeInfo.ContainerRuntimeVersion,
		}
		if t, ok := renewed[n.Name]; ok {
			d.HeartbeatAge = time.Since(t)
		} else {
			d.NoLease, d.HeartbeatAge = true, readyHeartbeatAge(n)
		}
		switch {
		case in.SkipKubelet != "":
			d.Unchecked = in.SkipKubelet
			continue
		case in.Sample != nil && !in.Sample[n.Name]:
			d.NotSampled = true
			continue
		}
		rt, from := runtimeOf(in.Runtimes, d)
		d.RuntimeFrom = from
		g.Go(func() error { readKubelet(ctx, in.Clientset, d, rt); return nil })
	}
	_ = g.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// readyHeartbeatAge is the age of the node's Ready condition heartbeat, 0
// where it has none.
func readyHeartbeatAge(n corev1.Node) time.Duration {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && !c.LastHeartbeatTime.IsZero() {
			return time.Since(c.LastHeartbeatTime.Time)
		}
	}
	return 0
}

// readKubelet asks the node's kubelet for its gates and configuration and
// sets what the oracle expects it to declare. A stopped kubelet cannot say
// what it enables: the node is reported as unreachable, not skipped.
func readKubelet(ctx context.Context, cs kubernetes.Interface, d *Declaration, rt fixtures.Runtime) {
	var err error
	if d.Gates, err = KubeletGates(ctx, cs, d.Node); err == nil {
		d.CPUManager, d.RuntimeEndpoint, err = kubeletConfig(ctx, cs, d.Node)
	}
	if err != nil {
		d.Unreachable = err.Error()
		return
	}
	rt.CPUManagerPolicy = d.CPUManager
	d.judge(rt)
}

// judge sets what the oracle expects of the node, from its kubelet's
// gates and its runtime, and how the declared set differs from it.
func (d *Declaration) judge(rt fixtures.Runtime) {
	effective := map[string]bool{}
	for name, s := range d.Gates {
		effective[name] = s.Enabled
	}
	minor := kubeversion.MinorOf(d.KubeletVersion)
	d.Expected = fixtures.Expected(d.KubeletVersion, effective, rt)
	d.RuntimeReport = rt.Reported()
	switch d.RuntimeFrom {
	case RuntimeUnknown:
		d.RuntimeReport = nil
		d.Undecided = fixtures.RuntimeDependent(minor, effective)
	case RuntimeCRI:
		d.Undecided = fixtures.RuntimeDependentOn(minor, effective, rt, unseen(rt))
	default:
		d.Undecided = nil
	}
	d.Missing, d.Extra = diff(d.Expected, d.Declared)
	d.Missing, d.Extra = Without(d.Missing, d.Undecided), Without(d.Extra, d.Undecided)
}

// Where a node's runtime features came from.
const (
	RuntimeCRI     = "cri"
	RuntimeRelease = "release"
	RuntimeUnknown = "unknown"
)

// runtimeOf is what the node's runtime reports over the CRI: as read by the
// caller, or as the oracle knows its release.
func runtimeOf(read map[string]fixtures.Runtime, d *Declaration) (fixtures.Runtime, string) {
	if rt, ok := read[d.Node]; ok {
		return rt, RuntimeCRI
	}
	if r, ok := fixtures.RuntimeByVersion(d.Runtime); ok {
		return r.Reports, RuntimeRelease
	}
	return fixtures.Runtime{}, RuntimeUnknown
}

// Without is list less what drop has, in list's order.
func Without(list, drop []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}

// kubeletConfig reads the kubelet's running configuration (configz): its
// CPU manager policy and where its runtime's CRI socket is.
func kubeletConfig(ctx context.Context, cs kubernetes.Interface, node string) (cpuManagerPolicy, runtimeEndpoint string, err error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "configz").DoRaw(ctx)
	if err != nil {
		return "", "", fmt.Errorf("kubelet on %s /configz (node proxy): %w", node, err)
	}
	var cfg struct {
		KubeletConfig struct {
			CPUManagerPolicy         string `json:"cpuManagerPolicy"`
			ContainerRuntimeEndpoint string `json:"containerRuntimeEndpoint"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return "", "", fmt.Errorf("kubelet on %s /configz: %w", node, err)
	}
	return cfg.KubeletConfig.CPUManagerPolicy, cfg.KubeletConfig.ContainerRuntimeEndpoint, nil
}

func diff(expected, declared []string) (missing, extra []string) {
	return Without(expected, declared), Without(declared, expected)
}
