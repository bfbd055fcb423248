package probes

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/wait"
)

// RunInput configures one full probe of a cluster.
type RunInput struct {
	Config       *rest.Config
	PoolLabel    string // node label naming pools; "" picks the first of WellKnownPoolLabels any node carries
	NodeSelector string // label selector: only these nodes are read and probed ("" for all)
	// Namespace is an existing namespace for the probe pods: none is
	// created or removed, only the run's pods are deleted after.
	Namespace       string
	NamespacePrefix string // without Namespace: a namespace made from it, removed after
	Image           string // probe pods' image; "" is the pause image of the control plane's minor
	// CRIImage, where set, is ndfq's own image: a pod of it on each
	// kubelet-read node reads the runtime's CRI report there (a root pod
	// on the CRI socket: the run's namespace is labelled privileged).
	CRIImage       string
	Tolerations    []corev1.Toleration // besides the control-plane taint
	SchedulerNames []string            // placement probes also go through each of these schedulers
	SchedulerURL   string              // optional kube-scheduler /metrics URL
	KubeletSample  int                 // ask at most this many kubelets per pool (0: every one)
	// RunID labels everything the run creates (RunLabel); "" makes one.
	RunID string
	// WaitCleanup waits (wait-pods-gone) until the run's pods are gone from
	// their nodes before returning; otherwise their removal is asked and
	// goes on in the cluster (the verdict does not wait for kubelets).
	WaitCleanup bool
	Freshness   time.Duration // pools whose every node's lease is older are not probed with pods
	Progress    func(format string, args ...any)
}

// PoolProbe is one probe pod's outcome on one pool.
type PoolProbe struct {
	Pool      string        `json:"pool"`
	Scheduler string        `json:"scheduler,omitempty"` // "" for the default scheduler
	Feature   string        `json:"feature"`             // "" for the control
	Declares  bool          `json:"declares"`
	Bound     bool          `json:"bound"`
	Node      string        `json:"node,omitempty"`
	Message   string        `json:"message,omitempty"`
	Decision  time.Duration `json:"decisionNanos"`
	// DecisionFrom says how Decision was timed: "watch" (from sending the
	// create to seeing the decision, sub-second) or "condition" (creation
	// to the PodScheduled condition, whole seconds).
	DecisionFrom string    `json:"decisionFrom"`
	created      time.Time // when the create was sent, on the client's clock
	pod          string
}

// PoolUpdate is one update probe's outcome on one pool.
type PoolUpdate struct {
	Pool string `json:"pool"`
	// Kind is "" for a pod update, SliceKind for a ResourceSlice write
	// (Pod is then the slice's name).
	Kind     string `json:"kind,omitempty"`
	Pod      string `json:"pod"`
	Node     string `json:"node"`
	Feature  string `json:"feature"` // "" for the control
	Declares bool   `json:"declares"`
	Code     int32  `json:"code"`
	Message  string `json:"message,omitempty"`
	// Dropped is the field the admitted object lost (UpdateResult.Dropped).
	Dropped string `json:"dropped,omitempty"`
	// ByAPIServer is each apiserver's answer to the same update as a
	// server-side dry run, where the cluster lists several: through one
	// address, which one answered is chance.
	ByAPIServer map[string]Answer `json:"byAPIServer,omitempty"`
}

// Answer is one apiserver's answer to an update.
type Answer struct {
	Code    int32  `json:"code"`
	Message string `json:"message,omitempty"`
}

// NotProbed is a feature the control plane's minor infers that no probe
// pod asked for, and why.
type NotProbed struct {
	Feature string `json:"feature"`
	At      string `json:"at"` // "scheduling" or "update"
	// GateOff is the kube-apiserver gate that is off, so that no pod can
	// ask for the feature here; "" where ndfq has no probe for it.
	GateOff string `json:"gateOff,omitempty"`
	// Path: no pod field asks for the feature (the apiserver or an
	// allocator acts on it); Why says what its gate off stops.
	Path bool   `json:"path,omitempty"`
	Why  string `json:"why"`
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
	Pools         map[string][]string `json:"pools"` // pool -> nodes
	// The run's scope: --node-selector, --kubelet-sample, and the nodes
	// the selector left out, by name.
	NodeSelector  string   `json:"nodeSelector,omitempty"`
	KubeletSample int      `json:"kubeletSample,omitempty"`
	OutOfScope    []string `json:"outOfScope,omitempty"`
	// NotProbed are the features no probe pod asked for.
	NotProbed  []NotProbed     `json:"notProbed,omitempty"`
	Unprobed   []string        `json:"unprobedPools,omitempty"` // all nodes stale: no pods placed
	PoolLabel  PoolLabelChoice `json:"poolLabel"`
	Image      string          `json:"image"`
	Namespace  string          `json:"namespace"`
	Schedulers []string        `json:"schedulers,omitempty"` // besides the default one
	// SchedulerURL is where the scheduler's gates were read (given, or its
	// pod's own address); SchedulerUnchecked says why none were taken:
	// unreachable, not a kube-scheduler, not the leader.
	SchedulerURL       string `json:"schedulerMetricsURL,omitempty"`
	SchedulerUnchecked string `json:"schedulerUnchecked,omitempty"`
	// KubeletUnchecked says why no kubelet's gates were read ("" when they were).
	KubeletUnchecked string `json:"kubeletUnchecked,omitempty"`
	// APIServers are each apiserver's gates by endpoint, where the cluster
	// lists more than one (an HA control plane behind one address).
	APIServers map[string]Gates `json:"apiServersGates,omitempty"`
	// APIServerVersions are each of those apiservers' versions.
	APIServerVersions map[string]string `json:"apiServerVersions,omitempty"`
	// APIServersUnchecked says why not every apiserver's gates were read
	// ("" when they were, or when the cluster lists one).
	APIServersUnchecked string `json:"apiServersUnchecked,omitempty"`
	// NodeWrites is what one node's kubelet identity may write.
	NodeWrites NodeWrites `json:"nodeWrites"`
	// Synthetic is the node that declares nothing, added where no real
	// pool could show the plugin or the validator refusing.
	Synthetic Synthetic `json:"synthetic"`
	// Routes are how the apiservers routed an exec into a probe pod on each
	// pool (ExtendWebSocketsToKubelet), where the control plane records it.
	Routes []PoolRoute `json:"routes,omitempty"`
	// SlicesUnchecked says why no ResourceSlice write was asked where the
	// validator judges them (DRANodeAllocatableResources on).
	SlicesUnchecked string `json:"slicesUnchecked,omitempty"`
	// APIRequests is how many requests the probe sent to the apiserver.
	APIRequests int64 `json:"apiRequests"`
	// RunID is the value of RunLabel on everything the run created.
	RunID string `json:"runID"`
	// Signals are the upstream series read before the probe's pods and
	// while they still wait: the leading scheduler's and each apiserver's.
	Signals []SignalReading `json:"signals,omitempty"`
}

// NewRunID is a fresh run id: lower-case letters and digits, a label value.
func NewRunID() string { return utilrand.String(5) }

// serverVersion is the apiserver's git version, asked with ctx.
func serverVersion(ctx context.Context, cs kubernetes.Interface) (string, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var info version.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return "", fmt.Errorf("/version: %w", err)
	}
	return info.GitVersion, nil
}

// PermissionError names the verb and resource the identity lacks.
type PermissionError struct{ Verb, Resource, Subresource, Namespace string }

func (e *PermissionError) Error() string {
	r := e.Resource
	if e.Subresource != "" {
		r += "/" + e.Subresource
	}
	if e.Namespace != "" && e.Namespace != checkNamespace {
		r += " in namespace " + e.Namespace
	}
	return fmt.Sprintf("missing permission: %s %s (see config/rbac/)", e.Verb, r)
}

// prober is one run's fixed settings, shared by every pool's probes.
type prober struct {
	in    RunInput
	cs    kubernetes.Interface
	id    string // in every pod's name and RunLabel
	ns    string
	image string
	api   Gates
	minor string // the control plane's
	// apiservers are a client for each apiserver, where the cluster lists
	// several: every update is asked of each as a dry run.
	apiservers map[string]kubernetes.Interface

	declared map[string][]string // by node, as read before any pod was placed
	// synthetic is the run's synthetic node, "" when none was added.
	synthetic string
	// routes reads each pool's WebSocket route (nil where none is recorded).
	routes *routes
	// slices: each pool is also asked for ResourceSlice writes.
	slices bool
	// watched is the watch of the run's pods, which waits read.
	watched *decisions

	// inFlight bounds the probe pods being placed or started at once: a
	// pool's few go at once, a whole fleet's ~90 do not land on the
	// kubelets in one burst (on 2 cores the load average passed 100).
	inFlight chan struct{}

	mu              sync.Mutex
	created         []string         // pods to delete after, in a namespace the probe keeps
	dropped         map[string]bool  // created pods already deleted once their answer was in
	routeCandidates []routeCandidate // a running pod per pool, for the exec routes
}

// declares is whether any of the nodes declares feature ("" needs nothing).
func (p *prober) declares(feature string, nodes ...string) bool {
	return feature == "" || slices.ContainsFunc(nodes, func(n string) bool { return slices.Contains(p.declared[n], feature) })
}

// Probe runs every probe against the cluster: declarations and gates,
// then placement and update probes per pool in its own namespace (or the
// one given). It stores nothing on Node objects: the node-write check is
// a server-side dry run.
func Probe(ctx context.Context, in RunInput) (*Run, error) {
	say := in.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	run := &Run{Started: time.Now(), Pools: map[string][]string{}, Namespace: in.Namespace, Schedulers: in.SchedulerNames,
		NodeSelector: in.NodeSelector, KubeletSample: in.KubeletSample}
	cfg := rest.CopyConfig(in.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &run.APIRequests} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// Discovery's ServerVersion takes no context: an interrupt must reach the first request too.
	if run.ServerVersion, err = serverVersion(ctx, cs); err != nil {
		return nil, fmt.Errorf("cluster unreachable: %w", err)
	}
	p := &prober{in: in, cs: cs, id: cmp.Or(in.RunID, NewRunID()), minor: kubeversion.MinorOf(run.ServerVersion), image: in.Image, inFlight: make(chan struct{}, maxInFlight)}
	run.RunID = p.id
	if p.image == "" {
		if p.image, err = fixtures.PauseImage(p.minor); err != nil {
			return nil, err
		}
	}
	run.Image = p.image
	if run.KubeletUnchecked, err = checkPermissions(ctx, cs, in.Namespace); err != nil {
		return nil, err
	}
	say("reading gates and declarations of every node")
	if run.APIServer, err = APIServerGates(ctx, cs); err != nil {
		return nil, err
	}
	p.api = run.APIServer
	run.NotProbed = p.notProbed()
	var apiservers map[string]kubernetes.Interface
	apiservers, run.APIServers, run.APIServerVersions, run.APIServersUnchecked = everyAPIServer(ctx, cs, cfg)
	if len(apiservers) > 1 {
		p.apiservers = apiservers
	}
	if run.SchedulerURL = in.SchedulerURL; in.SchedulerURL != "" {
		run.Scheduler, run.SchedulerUnchecked = LeadingSchedulerGates(ctx, cs, in.Config, in.SchedulerURL)
	} else {
		run.Scheduler, run.SchedulerURL, run.SchedulerUnchecked = DiscoveredSchedulerGates(ctx, cs, in.Config)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: in.NodeSelector})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		return nil, fmt.Errorf("no node matches --node-selector %q", in.NodeSelector)
	}
	if in.NodeSelector != "" {
		if run.OutOfScope, err = outOfScope(ctx, cfg, nodes.Items); err != nil {
			return nil, err
		}
	}
	run.PoolLabel = ChoosePoolLabel(nodes.Items, in.PoolLabel)
	pools, sliced := SlicePools(nodes.Items, run.PoolLabel.Label)
	if run.Declarations, err = Declarations(ctx, DeclarationsInput{Clientset: cs, Nodes: nodes.Items, SkipKubelet: run.KubeletUnchecked,
		Sample: sample(pools, in.KubeletSample)}); err != nil {
		return nil, err
	}
	p.declared = map[string][]string{}
	fresh := map[string]bool{}
	for i := range run.Declarations {
		d := &run.Declarations[i]
		d.Pool = pools[d.Node]
		run.Pools[d.Pool] = append(run.Pools[d.Pool], d.Node)
		p.declared[d.Node] = d.Declared
		if in.Freshness == 0 || d.HeartbeatAge <= in.Freshness {
			fresh[d.Pool] = true
		}
	}
	say("pools by %s: %s", nonEmptyLabel(run.PoolLabel), describePools(run.Pools))
	say("asking, as one node's kubelet identity, to write its own and another node's declarations (dry runs)")
	if run.NodeWrites, err = AskNodeWrites(ctx, cs, cfg, run.Declarations, slices.Sorted(maps.Keys(apiservers))); err != nil {
		return nil, err
	}
	if run.Namespace == "" {
		done, err := p.ownNamespace(ctx, run)
		if err != nil {
			return nil, err
		}
		defer done()
	} else {
		defer p.deleteCreated(ctx)
	}
	p.ns = run.Namespace
	if p.routes, err = p.newRoutes(ctx, cfg); err != nil {
		return nil, err
	}
	if p.slices, run.SlicesUnchecked, err = p.probesSlices(ctx); err != nil {
		return nil, err
	}
	if needed := p.syntheticNeeds(run.Pools, fresh); len(needed) > 0 {
		say("every probed pool declares every feature probed at %s: adding a node that declares nothing for the run", strings.Join(needed, " and "))
		if run.Synthetic, err = p.addSyntheticNode(ctx, needed); err != nil {
			return nil, err
		}
		if node := run.Synthetic.Node; node != "" {
			p.synthetic = node
			// Deferred after the namespace's removal, so it runs first: its
			// pods are deleted at once, then the node, also after Ctrl-C.
			defer func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait.MustGet(wait.PodsGone).Timeout)
				defer cancel()
				say("removing synthetic node %s", node)
				evicted, err := removeSyntheticNode(cctx, p.cs, node)
				run.Synthetic.Evicted = evicted
				if err != nil {
					say("%v (ndfq probe cleanup --run %s removes it)", err, p.id)
				}
			}()
		} else {
			say("%s", run.Synthetic.Unchecked)
		}
	}
	watched, err := p.watchDecisions(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.watched = watched
	defer watched.stop()
	// The scheduler's series only where its URL was taken as the leader's:
	// a standby's or another component's says nothing of the refusals.
	leading := run.SchedulerURL
	if run.SchedulerUnchecked != "" {
		leading = ""
	}
	signals := signalTargets(cs, in.Config, p.apiservers, leading)
	run.Signals = readSignals(ctx, signals)
	say("placement and update probes on %d pools in namespace %s with image %s", len(run.Pools), p.ns, p.image)
	// Pools are probed at once: each probe waits on its own pods.
	type poolResult struct {
		placements []PoolProbe
		updates    []PoolUpdate
		err        error
	}
	results := make([]poolResult, len(run.Pools)+1) // the last is the synthetic node's
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
			// With --node-selector a label value may also name nodes outside the run: steer by name.
			steer := steering(run.PoolLabel.Label, pool, run.Pools[pool], sliced[pool] || in.NodeSelector != "")
			schedulers := append([]string{""}, in.SchedulerNames...)
			placed := make([][]PoolProbe, len(schedulers))
			var g errgroup.Group
			for j, sched := range schedulers {
				g.Go(func() (err error) {
					placed[j], err = p.placeAll(ctx, pool, steer, run.Pools[pool], sched)
					return err
				})
			}
			var sliceWrites []PoolUpdate
			g.Go(func() (err error) {
				pr.updates, err = p.updateAll(ctx, pool, steer)
				if err == nil {
					say("pool %s: %d updates answered", pool, len(pr.updates))
				}
				return err
			})
			if p.slices {
				g.Go(func() (err error) {
					sliceWrites, err = p.sliceWrites(ctx, pool, run.Pools[pool][0])
					return err
				})
			}
			pr.err = g.Wait()
			pr.placements = slices.Concat(placed...)
			if pr.err == nil {
				say("pool %s: %d placements decided", pool, len(pr.placements))
			}
			pr.updates = append(pr.updates, sliceWrites...)
		}()
	}
	if p.synthetic != "" {
		pr := &results[len(results)-1]
		wg.Go(func() { pr.placements, pr.updates, pr.err = p.probeSynthetic(ctx, run.Synthetic.Needed) })
	}
	if readers := p.criReadable(run.Declarations); len(readers) > 0 {
		say("reading the runtime's CRI report on %d nodes with %s", len(readers), p.in.CRIImage)
		wg.Go(func() { p.readRuntimes(ctx, readers) })
	}
	wg.Wait()
	// While the refused pods still wait: the scheduler's gauge holds them.
	rereadSignals(ctx, signals, run.Signals)
	for _, pr := range results {
		if pr.err != nil {
			return run, pr.err
		}
		run.Placements = append(run.Placements, pr.placements...)
		run.Updates = append(run.Updates, pr.updates...)
	}
	if p.routes != nil {
		say("exec routes of %d pools", len(p.routeCandidates))
		run.Routes = p.routes.check(ctx, p.ns, p.routeCandidates)
	}
	watched.time(run.Placements)
	run.Took = time.Since(run.Started)
	return run, nil
}

// sample picks at most n nodes of each pool at random (nil: every node).
func sample(pools map[string]string, n int) map[string]bool {
	if n <= 0 {
		return nil
	}
	byPool := map[string][]string{}
	for node, pool := range pools {
		byPool[pool] = append(byPool[pool], node)
	}
	out := map[string]bool{}
	for _, nodes := range byPool {
		rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		for _, node := range nodes[:min(n, len(nodes))] {
			out[node] = true
		}
	}
	return out
}

func nonEmptyLabel(c PoolLabelChoice) string {
	if c.Label == "" {
		return "kubelet version (no node carries a well-known pool label)"
	}
	return fmt.Sprintf("label %s (%s) and kubelet version", c.Label, c.Source)
}

// ownNamespace creates the run's namespace; done removes it.
func (p *prober) ownNamespace(ctx context.Context, run *Run) (done func(), err error) {
	labels := map[string]string{RunLabel: p.id, ManagedByLabel: ManagedBy}
	if p.in.CRIImage != "" {
		labels[podSecurityEnforce] = "privileged" // the CRI readers mount the runtime's socket
	}
	ns, err := p.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: p.in.NamespacePrefix + "-",
		Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create probe namespace: %w", err)
	}
	run.Namespace = ns.Name
	done = func() {
		// Also on Ctrl-C: the probe namespace must not outlive the probe.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait.MustGet(wait.PodsGone).Timeout)
		defer cancel()
		if !p.in.WaitCleanup {
			// One request: the namespace controller removes the pods.
			p.say("removing namespace %s (its pods go on terminating in the cluster)", ns.Name)
			_ = p.cs.CoreV1().Namespaces().Delete(cctx, ns.Name, metav1.DeleteOptions{})
			return
		}
		p.say("removing namespace %s", ns.Name)
		// The namespace controller would delete the pods only after it has
		// gone through every resource type, with their 30 s grace period.
		p.deletePods(cctx)
		_ = p.cs.CoreV1().Namespaces().Delete(cctx, ns.Name, metav1.DeleteOptions{})
		p.waitPodsGone(cctx)
	}
	if err := wait.ForDefaultServiceAccount(ctx, p.cs, ns.Name); err != nil {
		done()
		return nil, err
	}
	return done, nil
}

// deleteCreated removes the run's pods from a namespace the probe keeps.
func (p *prober) deleteCreated(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait.MustGet(wait.PodsGone).Timeout)
	defer cancel()
	p.say("deleting the probe pods from namespace %s", p.ns)
	p.deletePods(cctx)
	if p.in.WaitCleanup {
		p.waitPodsGone(cctx)
	}
}

// deletePods deletes the run's pods at once with a 1 s grace period: their
// kubelets stop them (probe images exit on SIGTERM) before they are gone.
func (p *prober) deletePods(ctx context.Context) {
	p.mu.Lock()
	left := slices.DeleteFunc(slices.Clone(p.created), func(name string) bool { return p.dropped[name] })
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, name := range left {
		wg.Go(func() {
			_ = p.cs.CoreV1().Pods(p.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
		})
	}
	wg.Wait()
}

// waitPodsGone waits until the run's pods are gone from their nodes. A
// namespace's deletion leaves its pods running until its controller gets
// to them. Not seeing them go is said, not an error: the verdict stands.
func (p *prober) waitPodsGone(ctx context.Context) {
	p.mu.Lock()
	var left []types.NamespacedName
	for _, name := range p.created {
		left = append(left, types.NamespacedName{Namespace: p.ns, Name: name})
	}
	p.mu.Unlock()
	if err := waitPodsGone(ctx, p.cs, left); err != nil {
		p.say("probe pods not gone yet from namespace %s: %v", p.ns, err)
	}
}

func (p *prober) say(format string, args ...any) {
	if p.in.Progress != nil {
		p.in.Progress(format, args...)
	}
}

// maxInFlight is how many probe pods one run places or starts at once.
const maxInFlight = 12

// slot waits for one of inFlight's places and returns its release.
func (p *prober) slot() func() {
	p.inFlight <- struct{}{}
	return func() { <-p.inFlight }
}

// drop deletes a pod whose answer is in, while the run goes on: its
// kubelet stops it meanwhile (a bound placement pod mostly before it
// starts), and the run's end waits for the few pods left, not for ~150.
// The synthetic node's pods are not dropped: no kubelet would let them go.
func (p *prober) drop(ctx context.Context, name string) {
	err := p.cs.CoreV1().Pods(p.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
	if err == nil || apierrors.IsNotFound(err) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.dropped == nil {
			p.dropped = map[string]bool{}
		}
		p.dropped[name] = true
	}
}

// remember keeps a pod's name for deleteCreated.
func (p *prober) remember(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, name)
}

// countingTransport counts requests: the probe's cost on a large fleet.
type countingTransport struct {
	next http.RoundTripper
	n    *int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	atomic.AddInt64(t.n, 1)
	return t.next.RoundTrip(r)
}

func sortedPools(m map[string][]string) []string {
	var out []string
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// placeAll places the control pod and each scheduling probe's pod on the
// pool at once (each waits for its own decision), in that order.
func (p *prober) placeAll(ctx context.Context, pool string, steer []corev1.NodeSelectorTerm, nodes []string, scheduler string) ([]PoolProbe, error) {
	kind := "p"
	if scheduler != "" {
		kind = "s" + strconv.Itoa(slices.Index(p.in.SchedulerNames, scheduler))
	}
	type try struct {
		feature string
		shape   func(*corev1.Pod)
	}
	tries := []try{{"", func(*corev1.Pod) {}}}
	for _, sp := range p.schedulingProbes() {
		tries = append(tries, try{sp.Feature, sp.Apply})
	}
	out := make([]PoolProbe, len(tries))
	g, ctx := errgroup.WithContext(ctx)
	for i, t := range tries {
		g.Go(func() error {
			defer p.slot()()
			pod := p.probePod(p.podName(kind, pool, i), steer, scheduler, t.shape)
			if pool == SyntheticPool {
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, syntheticTolerations(p.id)...)
			}
			p.remember(pod.Name)
			res, err := p.place(ctx, pod)
			if err != nil {
				if scheduler != "" {
					err = fmt.Errorf("%w (is a scheduler named %q running?)", err, scheduler)
				}
				return err
			}
			// A bound pod is judged by its node; a refused one by whether any node of the pool declares.
			declares := p.declares(t.feature, nodes...)
			if res.Node != "" {
				declares = p.declares(t.feature, res.Node)
			}
			out[i] = PoolProbe{Pool: pool, Scheduler: scheduler, Feature: t.feature, Declares: declares,
				Bound: res.Node != "", Node: res.Node, Message: res.Message, Decision: res.Decision, DecisionFrom: DecisionFromCondition,
				created: res.Created, pod: res.Pod}
			// A refused pod stays: the scheduler's gauge is read while it waits.
			if res.Node != "" && pool != SyntheticPool {
				p.drop(ctx, pod.Name)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// updateAll starts one pod per control update and update probe on the
// pool at once, and sends each its update once it runs, in that order.
func (p *prober) updateAll(ctx context.Context, pool string, steer []corev1.NodeSelectorTerm) ([]PoolUpdate, error) {
	type try struct {
		feature string
		shape   func(*corev1.Pod)
		started func(*corev1.Pod) bool
		sub     string
		patch   []byte
	}
	var tries []try
	for _, c := range fixtures.ControlUpdates() {
		if c.Invalid != nil {
			continue // validation's or the resize strategy's to answer: the suites hold it, the verdict is about admission
		}
		tries = append(tries, try{"", c.Apply, nil, c.Subresource, c.Patch})
	}
	for _, u := range p.updateProbes() {
		tries = append(tries, try{u.Feature, u.Apply, u.Started, u.Subresource, u.Patch})
	}
	out := make([]PoolUpdate, len(tries))
	g, ctx := errgroup.WithContext(ctx)
	for i, t := range tries {
		g.Go(func() error {
			defer p.slot()()
			pod := p.probePod(p.podName("u", pool, i), steer, "", t.shape)
			synthetic := pool == SyntheticPool
			if synthetic {
				// Bound there directly: no kubelet will start it, and the
				// validator judges the update by the node it is bound to.
				pod.Spec.NodeName = p.synthetic
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, syntheticTolerations(p.id)...)
			}
			p.remember(pod.Name)
			created, err := CreatePod(ctx, p.cs, p.ns, pod)
			if err != nil {
				if apierrors.IsForbidden(err) {
					return &PermissionError{Verb: "create", Resource: "pods"}
				}
				return err
			}
			running := created
			if !synthetic {
				if running, err = p.started(ctx, pod.Name, t.started); err != nil {
					return err
				}
			}
			// Each apiserver first, as a dry run: the real update changes the
			// pod, and the same patch again would change nothing.
			byAPIServer, err := p.askEveryAPIServer(ctx, pod.Name, t.sub, t.patch, synthetic)
			if err != nil {
				return err
			}
			res, err := p.ask(ctx, synthetic, func(ctx context.Context) (UpdateResult, error) {
				return Update(ctx, p.cs, p.ns, pod.Name, t.sub, t.patch)
			})
			if err != nil {
				return err
			}
			out[i] = PoolUpdate{Pool: pool, Pod: pod.Name, Node: running.Spec.NodeName, Feature: t.feature, Declares: p.declares(t.feature, running.Spec.NodeName),
				Code: res.Code, Message: res.Message, ByAPIServer: byAPIServer}
			switch {
			case i == 0 && p.routes != nil && !synthetic:
				// The first control pod runs on the pool's node: an exec into it shows the route.
				node := running.Spec.NodeName
				p.mu.Lock()
				p.routeCandidates = append(p.routeCandidates, routeCandidate{pool: pool, node: node, pod: pod.Name, declares: p.declares(fixtures.ExtendWebSocketsToKubelet, node)})
				p.mu.Unlock()
			case !synthetic:
				p.drop(ctx, pod.Name)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// checkNamespace is where permissions are checked when the probe makes
// its own namespace (any name it might get).
const checkNamespace = "ndfq-probe-check"

// permissions are what a probe needs (config/rbac/ grants them): in ns,
// or cluster-wide with namespaces when the probe makes its own.
func permissions(ns string) []authzv1.ResourceAttributes {
	own := ns == ""
	if own {
		ns = checkNamespace
	}
	out := []authzv1.ResourceAttributes{
		{Verb: "list", Resource: "nodes"},
		{Verb: "get", Resource: "nodes"},
		{Verb: "list", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease"},
		{Verb: "create", Resource: "pods", Namespace: ns},
		{Verb: "get", Resource: "pods", Namespace: ns},
		{Verb: "patch", Resource: "pods", Namespace: ns},
		{Verb: "patch", Resource: "pods", Subresource: "resize", Namespace: ns},
		{Verb: "delete", Resource: "pods", Namespace: ns},
		{Verb: "watch", Resource: "pods", Namespace: ns},
	}
	if own {
		out = append(out,
			authzv1.ResourceAttributes{Verb: "create", Resource: "namespaces"},
			authzv1.ResourceAttributes{Verb: "delete", Resource: "namespaces"},
			authzv1.ResourceAttributes{Verb: "get", Resource: "serviceaccounts", Namespace: ns})
	}
	return out
}

// apiServersAccess lets the probe list every apiserver (the endpoints of
// the kubernetes Service) to read each one's gates.
var apiServersAccess = authzv1.ResourceAttributes{Verb: "list", Group: "discovery.k8s.io", Resource: "endpointslices", Namespace: metav1.NamespaceDefault}

// everyAPIServer reads each apiserver's gates and version where the
// cluster runs more than one: through the cluster's address the probe
// reads whichever one answered, and during a rolling change they differ.
// The apiservers are counted by their identity Leases and reached at the
// kubernetes Service's endpoints, or at their static pods' own addresses
// where those are more (every apiserver advertising one VIP). It keeps a
// client for each one read, and says why where it could not read them all.
func everyAPIServer(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config) (clients map[string]kubernetes.Interface, gates map[string]Gates, versions map[string]string, unchecked string) {
	attr := apiServersAccess
	if ok, err := allowed(ctx, cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}); err != nil || !ok {
		why := "the identity may not list endpointslices in default (config/rbac/ grants it)"
		if err != nil {
			why = err.Error()
		}
		return nil, nil, nil, why + ": the apiservers behind the cluster's address were not listed, so whether they all have the same gates and answer updates alike is unchecked"
	}
	endpoints, err := APIServerEndpoints(ctx, cs)
	if err != nil {
		return nil, nil, nil, err.Error() + ": whether every apiserver has the same gates and answers updates alike is unchecked"
	}
	identities, err := APIServerIdentities(ctx, cs, time.Now())
	if err != nil {
		return nil, nil, nil, err.Error() + ": how many apiservers run behind the cluster's address is unknown, so whether they all have the same gates and answer updates alike is unchecked"
	}
	targets, via := endpoints, "the kubernetes Service's endpoints"
	if static, err := StaticAPIServerAddresses(ctx, cs); err == nil && len(static) > len(endpoints) {
		targets, via = static, "their static pods' addresses"
	}
	if len(targets) < 2 && len(identities) < 2 {
		return nil, nil, nil, ""
	}
	clients, gates, versions = map[string]kubernetes.Interface{}, map[string]Gates{}, map[string]string{}
	var unread, why []string
	for _, ep := range targets {
		// An endpoint can be out of the probe's reach (a private address
		// behind a cloud load balancer): give up on it soon.
		readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		c, g, v, err := readAPIServerAt(readCtx, cfg, ep)
		cancel()
		if err != nil {
			unread = append(unread, err.Error())
			continue
		}
		clients[ep], gates[ep], versions[ep] = c, g, v
	}
	if len(unread) > 0 {
		why = append(why, fmt.Sprintf("%d of %d apiservers could not be read at their own address (%s)", len(unread), len(targets), strings.Join(unread, "; ")))
	}
	if len(identities) > len(clients) {
		why = append(why, fmt.Sprintf("%d apiservers run (identity Leases of %s) and %d could be reached one by one at %s (%s): %d were not asked",
			len(identities), strings.Join(identities, ", "), len(clients), via, strings.Join(slices.Sorted(maps.Keys(clients)), ", "), len(identities)-len(clients)))
	}
	if len(why) > 0 {
		unchecked = strings.Join(why, "; ") + ": whether they all have the same gates, answer updates alike and refuse foreign node writes is unchecked"
	}
	return clients, gates, versions, unchecked
}

// readAPIServerAt is a client of one apiserver, its gates and its version.
func readAPIServerAt(ctx context.Context, cfg *rest.Config, endpoint string) (kubernetes.Interface, Gates, string, error) {
	c, err := kubernetes.NewForConfig(AtAPIServer(cfg, endpoint))
	if err != nil {
		return nil, nil, "", err
	}
	g, err := APIServerGates(ctx, c)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: %w", endpoint, err)
	}
	v, err := c.Discovery().ServerVersion()
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s: version: %w", endpoint, err)
	}
	return c, g, v.GitVersion, nil
}

// askEveryAPIServer sends the update to each apiserver as a dry run (nil
// where the cluster lists one).
func (p *prober) askEveryAPIServer(ctx context.Context, pod, sub string, patch []byte, synthetic bool) (map[string]Answer, error) {
	if p.apiservers == nil {
		return nil, nil
	}
	out := map[string]Answer{}
	for ep, c := range p.apiservers {
		res, err := p.ask(ctx, synthetic, func(ctx context.Context) (UpdateResult, error) { return DryRunUpdate(ctx, c, p.ns, pod, sub, patch) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ep, err)
		}
		out[ep] = Answer{Code: res.Code, Message: res.Message}
	}
	return out, nil
}

// ask sends an update; to a pod on the synthetic node, again while the
// answering apiserver does not know the node yet.
func (p *prober) ask(ctx context.Context, synthetic bool, send func(context.Context) (UpdateResult, error)) (UpdateResult, error) {
	if synthetic {
		return validatorKnowsNode(ctx, p.synthetic, send)
	}
	return send(ctx)
}

// schedulingProbes are the control plane's scheduling probes whose pod
// shape its apiserver accepts (the field's gate on).
func (p *prober) schedulingProbes() []fixtures.FeaturePod {
	var out []fixtures.FeaturePod
	for _, sp := range fixtures.FeaturePods(p.minor) {
		if p.api.Enabled(sp.APIServerGate) {
			out = append(out, sp)
		}
	}
	return out
}

// updateProbes are the control plane's update probes its apiserver can
// judge: the feature's gate and the field's on.
func (p *prober) updateProbes() []fixtures.FeatureUpdate {
	var out []fixtures.FeatureUpdate
	for _, u := range fixtures.FeatureUpdates(p.minor) {
		if p.api.Enabled(fixtures.NodeDeclaredFeatures) && p.api.Enabled(u.APIServerGate) {
			out = append(out, u)
		}
	}
	return out
}

// notProbed names what the control plane's minor infers and no probe pod
// of this run asks for: the apiserver has the gate a probe needs off (the
// same gates schedulingProbes and updateProbes require), or ndfq has no probe.
func (p *prober) notProbed() []NotProbed {
	needs := map[string]string{} // "at/feature" -> the apiserver gate its probe needs
	for _, sp := range fixtures.FeaturePods(p.minor) {
		needs["scheduling/"+sp.Feature] = sp.APIServerGate
	}
	for _, u := range fixtures.FeatureUpdates(p.minor) {
		needs["update/"+u.Feature] = u.APIServerGate
		if !p.api.Enabled(fixtures.NodeDeclaredFeatures) {
			needs["update/"+u.Feature] = fixtures.NodeDeclaredFeatures
		}
	}
	var out []NotProbed
	for _, f := range fixtures.FeaturesOf(p.minor) {
		for at, inferred := range map[string]string{"scheduling": f.Scheduling, "update": f.Update} {
			if inferred == "" || (at == "update" && f.UpdateForbidden != "") {
				continue
			}
			gate, ok := needs[at+"/"+f.Name]
			if !ok && at == "scheduling" && f.FieldGate != "" && !p.api.Enabled(f.FieldGate) {
				gate, ok = f.FieldGate, true // no probe, but no pod could carry the field either
			}
			switch {
			case !ok:
				out = append(out, NotProbed{Feature: f.Name, At: at, Why: fmt.Sprintf("ndfq has no %s probe for it (%s)", at, inferred)})
			case !p.api.Enabled(gate):
				out = append(out, NotProbed{Feature: f.Name, At: at, GateOff: gate, Why: fmt.Sprintf("kube-apiserver has %s %s", gate, p.api.Describe(gate))})
			}
		}
	}
	out = append(out, p.pathsNotProbed()...)
	sort.Slice(out, func(i, j int) bool { return out[i].At+out[i].Feature < out[j].At+out[j].Feature })
	return out
}

// pathsNotProbed names the features no pod field asks for (the apiserver
// or an allocator acts on them) whose path this control plane cannot take
// here: its gate for them is off, so they do not apply.
func (p *prober) pathsNotProbed() []NotProbed {
	var out []NotProbed
	off := func(feature, at, why string, gates ...string) {
		if !fixtures.Registers(p.minor, feature) {
			return
		}
		if i := slices.IndexFunc(gates, func(g string) bool { return !p.api.Enabled(g) }); i >= 0 {
			out = append(out, NotProbed{Feature: feature, At: at, GateOff: gates[i], Path: true, Why: fmt.Sprintf("kube-apiserver has %s %s: %s", gates[i], p.api.Describe(gates[i]), why)})
		}
	}
	off(fixtures.ExtendWebSocketsToKubelet, "streaming", "it translates no WebSocket stream and counts no route", fixtures.TranslateStreamCloseWebsocketRequests)
	off(fixtures.DRANodeAllocatableResources, "update", "its validator judges no ResourceSlice", fixtures.NodeDeclaredFeatures, fixtures.DRANodeAllocatableResources)
	off(fixtures.DRAOptionalNodeOperations, "scheduling", "it drops skipNodeOperations from every ResourceSlice", fixtures.DRAOptionalNodeOperations)
	return out
}

// outOfScope lists, by name, the nodes a --node-selector left out
// (metadata only: a fleet's full node objects are not read twice).
func outOfScope(ctx context.Context, cfg *rest.Config, in []corev1.Node) ([]string, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	all, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("nodes")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	inScope := map[string]bool{}
	for _, n := range in {
		inScope[n.Name] = true
	}
	var out []string
	for _, n := range all.Items {
		if !inScope[n.Name] {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// How a decision was timed (PoolProbe.DecisionFrom).
const (
	decisionFromWatch = "watch"
	// DecisionFromCondition is a decision timed only by the control
	// plane's whole-second stamps.
	DecisionFromCondition = "condition"
)

// decisions watches the run's pods and keeps, on the client's clock, when
// each was first seen decided (bound, or refused as Unschedulable): with
// when its create was sent that times a decision below the conditions'
// whole seconds (the scheduler's events carry no microseconds here:
// finding F21). It also keeps each pod as last seen, so waits for a
// decision or a start read the watch instead of polling the apiserver
// (one stream, not hundreds of throttled requests).
type decisions struct {
	mu      sync.Mutex
	seen    map[string]time.Time
	pods    map[string]*corev1.Pod
	changed chan struct{} // closed at each event, then replaced
	ended   bool          // the watch stopped: waits poll instead
	stop    func()
}

// watchDecisions starts the watch; stop ends it. The watch lasts the run:
// --request-timeout (the client's whole-request bound) would cut it after
// 30 s and leave later decisions untimed, so its client has none (the
// run's context bounds it).
func (p *prober) watchDecisions(ctx context.Context, cfg *rest.Config) (*decisions, error) {
	cs := p.cs
	if cfg != nil && cfg.Timeout > 0 {
		long := rest.CopyConfig(cfg)
		long.Timeout = 0
		var err error
		if cs, err = kubernetes.NewForConfig(long); err != nil {
			return nil, err
		}
	}
	w, err := cs.CoreV1().Pods(p.ns).Watch(ctx, metav1.ListOptions{LabelSelector: RunLabel + "=" + p.id})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil, &PermissionError{Verb: "watch", Resource: "pods", Namespace: p.ns}
		}
		return nil, fmt.Errorf("watch probe pods: %w", err)
	}
	d := &decisions{seen: map[string]time.Time{}, pods: map[string]*corev1.Pod{}, changed: make(chan struct{}), stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			d.mu.Lock()
			if _, ok := d.seen[pod.Name]; !ok && decided(pod) {
				d.seen[pod.Name] = time.Now()
			}
			d.pods[pod.Name] = pod
			close(d.changed)
			d.changed = make(chan struct{})
			d.mu.Unlock()
		}
		d.mu.Lock()
		d.ended = true
		close(d.changed)
		d.changed = make(chan struct{})
		d.mu.Unlock()
	}()
	return d, nil
}

// place creates the pod and waits for the scheduler's decision, as Place
// does, reading the run's watch.
func (p *prober) place(ctx context.Context, pod *corev1.Pod) (Placement, error) {
	start := time.Now()
	created, err := CreatePod(ctx, p.cs, p.ns, pod)
	if err != nil {
		return Placement{Pod: pod.Name}, fmt.Errorf("create probe pod %s: %w", pod.Name, err)
	}
	res := Placement{Pod: created.Name, Created: start}
	_, ok, err := p.watched.await(ctx, wait.Scheduling, created.Name, func(got *corev1.Pod) (bool, error) { return res.decidedBy(got, start), nil })
	if !ok {
		return pollPlacement(ctx, p.cs, p.ns, created.Name, start)
	}
	return res, err
}

// started waits, reading the run's watch, until the pod started (Running
// and Ready, or what started says), as wait.ForPodStarted does.
func (p *prober) started(ctx context.Context, pod string, started func(*corev1.Pod) bool) (*corev1.Pod, error) {
	if started == nil {
		started = func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && wait.PodReady(p) }
	}
	got, ok, err := p.watched.await(ctx, wait.PodRunning, pod, func(got *corev1.Pod) (bool, error) {
		if got.Status.Phase == corev1.PodFailed {
			return false, fmt.Errorf("pod %s failed on %s: %s %s", pod, got.Spec.NodeName, got.Status.Reason, got.Status.Message)
		}
		return started(got), nil
	})
	if !ok {
		return wait.ForPodStarted(ctx, p.cs, p.ns, pod, started)
	}
	return got, err
}

// await waits (bounded by name's timeout) until the watch shows pod
// where cond holds; ok is false where the watch ended first (the caller
// polls instead).
func (d *decisions) await(ctx context.Context, name wait.Name, pod string, cond func(*corev1.Pod) (bool, error)) (got *corev1.Pod, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait.MustGet(name).Timeout)
	defer cancel()
	for {
		d.mu.Lock()
		got, ended, changed := d.pods[pod], d.ended, d.changed
		d.mu.Unlock()
		if got != nil {
			done, err := cond(got)
			if err != nil || done {
				return got, true, err
			}
		}
		if ended {
			return nil, false, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
				return got, true, cause // the run's own context ended (an interrupt, --timeout)
			}
			state := "never seen"
			if got != nil {
				state = fmt.Sprintf("phase %s on %q", got.Status.Phase, got.Spec.NodeName)
			}
			return got, true, fmt.Errorf("pod %s: not done within %s (%s): %s", pod, wait.MustGet(name).Timeout, name, state)
		}
	}
}

// decided is whether the scheduler has bound the pod or refused it.
func decided(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return (c.Status == corev1.ConditionTrue && p.Spec.NodeName != "") || (c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable)
		}
	}
	return p.Spec.NodeName != ""
}

// time re-times each placement the watch saw decided: from when its create
// was sent to when it was seen, kept within a second of the control
// plane's own whole-second stamps (a watch delayed on a loaded machine
// does not stretch a decision past what the stamps allow).
func (d *decisions) time(placements []PoolProbe) {
	d.stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range placements {
		pl := &placements[i]
		seen, ok := d.seen[pl.pod]
		if !ok || pl.created.IsZero() || seen.Before(pl.created) {
			continue
		}
		lo, hi := max(pl.Decision-time.Second, 0), pl.Decision+time.Second
		pl.Decision, pl.DecisionFrom = min(max(seen.Sub(pl.created), lo), hi), decisionFromWatch
	}
}

// allowed asks the apiserver whether the probe's identity may do what spec says.
func allowed(ctx context.Context, cs kubernetes.Interface, spec authzv1.SelfSubjectAccessReviewSpec) (bool, error) {
	rev, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		what := "/metrics"
		if a := spec.ResourceAttributes; a != nil {
			what = a.Verb + " " + strings.TrimSuffix(a.Resource+"/"+a.Subresource, "/")
		}
		return false, fmt.Errorf("check permission %s: %w", what, err)
	}
	return rev.Status.Allowed, nil
}

// kubeletAccess lets the probe read kubelets' gates and configuration.
var kubeletAccess = authzv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "proxy"}

// checkPermissions fails on a permission every probe needs; without
// kubeletAccess it says why the kubelet checks will not be made.
func checkPermissions(ctx context.Context, cs kubernetes.Interface, ns string) (kubeletUnchecked string, err error) {
	for _, attr := range permissions(ns) {
		ok, err := allowed(ctx, cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr})
		if err != nil {
			return "", err
		}
		if !ok {
			return "", &PermissionError{Verb: attr.Verb, Resource: attr.Resource, Subresource: attr.Subresource, Namespace: attr.Namespace}
		}
	}
	ok, err := allowed(ctx, cs, authzv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authzv1.NonResourceAttributes{Verb: "get", Path: "/metrics"}})
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &PermissionError{Verb: "get", Resource: "/metrics"}
	}
	attr := kubeletAccess
	if ok, err = allowed(ctx, cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}); err != nil || ok {
		return "", err
	}
	return "the identity may not get nodes/proxy (config/rbac/kubelet.yaml grants it), so no kubelet's gates or configuration were read: " +
		"declared sets are not compared with what each kubelet must declare, and kubelets are not checked for the rollout order", nil
}
