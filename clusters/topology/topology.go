// Package topology is the file format of a cluster ndfq brings up: one
// control plane and pools of workers, each with its own Kubernetes version
// and feature gates per component. Validate refuses, before anything is
// provisioned, every topology that breaks version skew or would stop a
// component from starting.
package topology

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ndfq/ndfq/clusters"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/gotool"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// PoolLabel is the node label that carries a node's pool name.
const PoolLabel = "ndfq.io/pool"

// ControlPlanePool is the pool name of the control-plane node.
const ControlPlanePool = "control-plane"

// Topology is one cluster: a control plane and worker pools.
type Topology struct {
	Name         string       `yaml:"name"`
	Description  string       `yaml:"description,omitempty"`
	ControlPlane ControlPlane `yaml:"controlPlane"`
	Workers      []Pool       `yaml:"workers"`
	// AcceptUncovered are the claims the topology has but ndfq cannot ask
	// here, run without on purpose: each with the reason, which report.md
	// shows. An uncovered cell not accepted keeps the run from GO.
	AcceptUncovered []AcceptedCell `yaml:"acceptUncovered,omitempty"`
}

// AcceptedCell names uncovered cells of the claim matrix by kind, pool
// ("" for every pool) and feature.
type AcceptedCell struct {
	Kind    string `yaml:"kind"`
	Pool    string `yaml:"pool,omitempty"`
	Feature string `yaml:"feature"`
	Reason  string `yaml:"reason"`
}

// Matches says whether the entry names the cell.
func (a AcceptedCell) Matches(kind, pool, feature string) bool {
	return a.Kind == kind && (a.Pool == "" || a.Pool == pool) && a.Feature == feature
}

// ControlPlane is the control-plane nodes and their components.
type ControlPlane struct {
	Version string `yaml:"version"`
	// KubeletVersion is the control-plane nodes' kubelet when it is older
	// than the control plane: a variant node image (kinder's term) with
	// kubeadm and the control plane of Version and the kubelet of this
	// version, for a pre-release whose own kubelet cannot be built here or
	// a fleet that upgrades control planes first. "" is Version.
	KubeletVersion string `yaml:"kubeletVersion,omitempty"`
	// KubeProxyVersion is a kube-proxy ndfq deploys itself, in place of
	// kubeadm's own of Version (kind's kubeProxyMode none; kubeadm's
	// kube-proxy addon phase of this version). "" or Version is kubeadm's.
	KubeProxyVersion string `yaml:"kubeProxyVersion,omitempty"`
	// Count is how many control-plane nodes run (0 means 1). Two or more
	// are an HA control plane: every node runs an apiserver and an etcd
	// member, and kind puts its load balancer in front of the apiservers.
	Count     int            `yaml:"count,omitempty"`
	APIServer ComponentFlags `yaml:"apiServer,omitempty"`
	Scheduler ComponentFlags `yaml:"scheduler,omitempty"`
	Kubelet   Kubelet        `yaml:"kubelet,omitempty"`
	// ExtraSchedulers run beside the default kube-scheduler, as a platform
	// team runs one for batch or legacy workloads.
	ExtraSchedulers []ExtraScheduler `yaml:"extraSchedulers,omitempty"`
	// Nodes are per-node settings of an HA control plane, in kind's order
	// (the first runs kubeadm init, the others join): a rolling change held
	// open, where one apiserver already (or still) runs other gates, another
	// --emulated-version or other admission plugins.
	Nodes []ControlPlaneNode `yaml:"nodes,omitempty"`
}

// ControlPlaneNode is one control-plane node's own settings. Its version
// is the control plane's: kubeadm joins every control-plane node at the
// init node's kubernetesVersion, so a node "still on the old minor" is
// written as --emulated-version of that minor.
type ControlPlaneNode struct {
	// APIServer is laid over controlPlane.apiServer on this node: its gates
	// are merged, its extraArgs set ("" removes a flag).
	APIServer ComponentFlags `yaml:"apiServer,omitempty"`
}

// ExtraScheduler is a second kube-scheduler of the control plane's own
// binary, a static pod on the first control-plane node with one profile: pods
// whose spec.schedulerName is Name are placed by it alone.
type ExtraScheduler struct {
	Name string `yaml:"name"`
	// IgnoresDeclarations disables the NodeDeclaredFeatures plugin in its
	// profile: a scheduler that predates declarations or was configured
	// without them binds a pod to a node lacking what the pod needs.
	IgnoresDeclarations bool            `yaml:"ignoresDeclarations,omitempty"`
	FeatureGates        map[string]bool `yaml:"featureGates,omitempty"`
}

// DefaultSchedulerName is the default kube-scheduler's profile.
const DefaultSchedulerName = "default-scheduler"

// reservedStaticPods are the control plane's own static pods, whose
// manifest names an extra scheduler must not take.
var reservedStaticPods = []string{DefaultSchedulerName, "kube-scheduler", "kube-apiserver", "kube-controller-manager", "etcd"}

// ComponentFlags is a control-plane component's flags.
type ComponentFlags struct {
	FeatureGates map[string]bool   `yaml:"featureGates,omitempty"`
	ExtraArgs    map[string]string `yaml:"extraArgs,omitempty"`
}

// Kubelet is a node's kubelet settings.
type Kubelet struct {
	FeatureGates map[string]bool   `yaml:"featureGates,omitempty"`
	ExtraArgs    map[string]string `yaml:"extraArgs,omitempty"`
	// Config is merged into the node's KubeletConfiguration (kubeadm patch).
	Config map[string]any `yaml:"config,omitempty"`
}

// Pool is a set of identical workers.
type Pool struct {
	Name    string  `yaml:"name"`
	Count   int     `yaml:"count"`
	Version string  `yaml:"version"`
	Kubelet Kubelet `yaml:"kubelet,omitempty"`
	// Runtime is the container runtime release of the pool's node image
	// (fixtures.Runtimes); "" is fixtures.DefaultRuntime.
	Runtime string `yaml:"runtime,omitempty"`
	// variantOf is, on the control-plane pool of a variant node image, the
	// control plane's version (its kubelet is Version).
	variantOf kubeversion.Version
}

var shipped = clusters.Topologies

// DefaultName is the topology `make e2e` brings up.
const DefaultName = "skew-1.37"

// Names lists the shipped topologies.
func Names() []string {
	entries, _ := shipped.ReadDir("topologies")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// Load reads a shipped topology by name or a topology file by path, and validates it.
func Load(nameOrPath string) (*Topology, error) { return LoadWith(nameOrPath, "") }

// LoadWith is Load with the control plane's version replaced (the
// KUBERNETES_VERSION knob of pre-release qualification), validated as if
// the file said it, so a version the oracle or the skew policy refuses
// stops here.
func LoadWith(nameOrPath, controlPlaneVersion string) (*Topology, error) {
	var data []byte
	var err error
	src := nameOrPath
	if strings.Contains(nameOrPath, "/") || strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml") {
		data, err = os.ReadFile(nameOrPath)
	} else {
		src = "topologies/" + nameOrPath + ".yaml"
		data, err = shipped.ReadFile(src)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no topology %q: shipped ones are %s, or give a file path", nameOrPath, strings.Join(Names(), ", "))
		}
	}
	if err != nil {
		return nil, err
	}
	return parse(src, data, controlPlaneVersion)
}

// Parse decodes strictly (unknown fields are errors, with their line) and validates.
func Parse(src string, data []byte) (*Topology, error) { return parse(src, data, "") }

func parse(src string, data []byte, controlPlaneVersion string) (*Topology, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var t Topology
	if err := dec.Decode(&t); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty topology file", src)
		}
		return nil, fmt.Errorf("%s: malformed topology: %w", src, err)
	}
	if controlPlaneVersion != "" {
		src += " with control plane " + controlPlaneVersion
		t.ControlPlane.Version = controlPlaneVersion
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return &t, nil
}

var topologyName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,30}[a-z0-9])?$`)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$`)

// ValidationError lists every problem found, one per line.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string {
	return "invalid topology:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// Validate checks the topology against the version skew policy and the
// oracle's gate rules for each component's minor.
func (t *Topology) Validate() error {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if !topologyName.MatchString(t.Name) {
		add("name %q must be short and use lowercase letters, digits, '-' and '.'", t.Name)
	}
	cp, err := kubeversion.Parse(t.ControlPlane.Version)
	if err != nil {
		add("controlPlane.version: %v", err)
	}
	cpMinor := cp.Minor()
	if err == nil {
		if err := fixtures.KnownMinor(cpMinor); err != nil {
			add("controlPlane.version %s: %v", t.ControlPlane.Version, err)
		} else if problem := checkRelease("controlPlane.version", cp); problem != "" {
			add("%s", problem)
		}
	}
	if c := t.ControlPlane.Count; c < 0 || c > maxControlPlaneNodes {
		add("controlPlane.count %d must be between 1 and %d (0 means 1)", c, maxControlPlaneNodes)
	}
	cpKubelet := cp
	if err == nil {
		p = append(p, checkComponent("controlPlane.apiServer", cpMinor, t.ControlPlane.APIServer)...)
		p = append(p, checkComponent("controlPlane.scheduler", cpMinor, t.ControlPlane.Scheduler)...)
		p = append(p, checkExtraSchedulers(cpMinor, t.ControlPlane.ExtraSchedulers)...)
		p = append(p, t.checkControlPlaneNodes(cpMinor)...)
		var problems []string
		cpKubelet, problems = checkControlPlaneKubelet(cp, t.ControlPlane.KubeletVersion)
		p = append(p, problems...)
		if cpKubelet != "" {
			p = append(p, checkKubelet("controlPlane.kubelet", cpKubelet.Minor(), t.ControlPlane.Kubelet)...)
		}
	}
	if len(t.Workers) == 0 {
		add("workers: at least one pool is needed")
	}
	seen := map[string]bool{ControlPlanePool: true}
	for i, pool := range t.Workers {
		where := fmt.Sprintf("workers[%d]", i)
		if pool.Name != "" {
			where = fmt.Sprintf("workers[%d] (%s)", i, pool.Name)
		}
		switch {
		case !dnsLabel.MatchString(pool.Name):
			add("%s: name %q must be a short DNS label", where, pool.Name)
		case seen[pool.Name]:
			add("%s: pool name %q is used twice (or is reserved)", where, pool.Name)
		}
		seen[pool.Name] = true
		if pool.Count < 1 || pool.Count > 10 {
			add("%s: count %d must be between 1 and 10", where, pool.Count)
		}
		v, problem := knownVersion(where+".version", pool.Version)
		if problem != "" {
			add("%s", problem)
			continue
		}
		minor := v.Minor()
		if cp != "" {
			if msg := kubeletSkew(cp, v); msg != "" {
				add("%s: %s", where, msg)
			}
		}
		p = append(p, checkKubelet(where+".kubelet", minor, pool.Kubelet)...)
		if _, err := fixtures.RuntimeByName(pool.Runtime); err != nil {
			add("%s.runtime: %v", where, err)
		}
	}
	if cp != "" && cpKubelet != "" {
		p = append(p, checkKubeProxy(cp, t.ControlPlane.KubeProxyVersion)...)
	}
	for i, a := range t.AcceptUncovered {
		for _, f := range [][2]string{{"kind", a.Kind}, {"feature", a.Feature}, {"reason", a.Reason}} {
			field, v := f[0], f[1]
			if strings.TrimSpace(v) == "" {
				add("acceptUncovered[%d].%s: required (an accepted claim names its cells and says why)", i, field)
			}
		}
	}
	if len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// checkControlPlaneKubelet returns the control-plane nodes' kubelet
// version: kubeadm there is the control plane's, and kubeadm, like the
// apiserver, takes a kubelet at most three minors older and never newer.
func checkControlPlaneKubelet(cp kubeversion.Version, field string) (kubeversion.Version, []string) {
	if field == "" {
		return cp, nil
	}
	v, problem := knownVersion("controlPlane.kubeletVersion", field)
	if problem != "" {
		return "", []string{problem}
	}
	if msg := kubeletSkew(cp, v); msg != "" {
		return "", []string{fmt.Sprintf("controlPlane.kubeletVersion: %s (kubeadm %s runs beside it)", msg, cp)}
	}
	return v, nil
}

// checkKubeProxy applies the skew policy to a kube-proxy ndfq deploys:
// never newer than the apiserver and at most three minors older (every
// kubelet is in that range too, so it is within three minors of each).
func checkKubeProxy(cp kubeversion.Version, field string) []string {
	if field == "" {
		return nil
	}
	v, problem := knownVersion("controlPlane.kubeProxyVersion", field)
	if problem == "" {
		problem = skew("controlPlane.kubeProxyVersion", cp, v)
	}
	if problem != "" {
		return []string{problem}
	}
	return nil
}

// knownVersion parses a topology's version field and checks that ndfq has
// an oracle for its minor; the problem names the field.
func knownVersion(field, value string) (kubeversion.Version, string) {
	v, err := kubeversion.Parse(value)
	if err != nil {
		return "", fmt.Sprintf("%s: %v", field, err)
	}
	if err := fixtures.KnownMinor(v.Minor()); err != nil {
		return "", fmt.Sprintf("%s %s: %v", field, value, err)
	}
	if problem := checkRelease(field, v); problem != "" {
		return "", problem
	}
	return v, ""
}

// checkRelease refuses a release that does not exist: fixtures' list, or
// with --allow-unlisted the module proxy, says which do.
func checkRelease(field string, v kubeversion.Version) string {
	err := fixtures.KnownRelease(strings.TrimPrefix(string(v), "v"))
	switch {
	case err == nil:
		return ""
	case !AllowUnlisted():
		return fmt.Sprintf("%s: %v", field, err)
	}
	if err := served(v); err != nil {
		return fmt.Sprintf("%s %s (--allow-unlisted): %v", field, v, err)
	}
	return ""
}

// AllowUnlisted says the user vouches for releases fixtures do not list
// (--allow-unlisted sets NDFQ_ALLOW_UNLISTED=true for every command a run
// makes); each is then looked up on the module proxy.
func AllowUnlisted() bool { return os.Getenv("NDFQ_ALLOW_UNLISTED") == "true" }

// served asks the module proxy whether k8s.io/kubernetes has the release:
// the node images are built from it.
func served(v kubeversion.Version) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := gotool.Run(ctx, os.TempDir(), nil, "list", "-m", "-json", "k8s.io/kubernetes@"+string(v)); err != nil {
		return fmt.Errorf("the module proxy has no k8s.io/kubernetes %s: %w", v, err)
	}
	return nil
}

// DeploysKubeProxy says whether ndfq deploys kube-proxy itself, and which
// version, instead of kubeadm's of the control plane's version.
func (t *Topology) DeploysKubeProxy() (kubeversion.Version, bool) {
	v := t.KubeProxyVersion()
	return v, v != t.ControlPlaneVersion()
}

// KubeProxyVersion is the kube-proxy every node runs (validated by Load).
func (t *Topology) KubeProxyVersion() kubeversion.Version {
	if t.ControlPlane.KubeProxyVersion == "" {
		return t.ControlPlaneVersion()
	}
	return kubeversion.MustParse(t.ControlPlane.KubeProxyVersion)
}

// ControlPlaneKubeletVersion is the control-plane nodes' kubelet (validated by Load).
func (t *Topology) ControlPlaneKubeletVersion() kubeversion.Version {
	if t.ControlPlane.KubeletVersion == "" {
		return t.ControlPlaneVersion()
	}
	return kubeversion.MustParse(t.ControlPlane.KubeletVersion)
}

// ControlPlaneNotes say, for a report, what about the control plane is not
// what kubeadm alone would have set up.
func (t *Topology) ControlPlaneNotes() []string {
	var out []string
	if k := t.ControlPlaneKubeletVersion(); k != t.ControlPlaneVersion() {
		out = append(out, fmt.Sprintf("its nodes run kubelet %s under kubeadm %s (a variant node image)", k, t.ControlPlaneVersion()))
	}
	if v, ok := t.DeploysKubeProxy(); ok {
		out = append(out, fmt.Sprintf("kube-proxy %s on every node, deployed by ndfq through kubeadm %s's addon phase in place of kubeadm %s's own", v, v, t.ControlPlaneVersion()))
	}
	if !t.LeaderElection() {
		out = append(out, "kube-scheduler and kube-controller-manager run with --leader-elect=false (one control-plane node: a lease renewal missed under load would restart them)")
	}
	if d := t.APIServersDisagree(); len(d) > 0 {
		out = append(out, fmt.Sprintf("its apiservers disagree, as in a rolling change held open: control-plane node 1 runs %s; %s", t.NodeAPIServer(0).describe(), strings.Join(d, "; ")))
	}
	return out
}

// maxControlPlaneNodes bounds an HA control plane on one 2-core machine:
// three apiservers and etcd members are what HA setups run.
const maxControlPlaneNodes = 3

// ControlPlaneCount is how many control-plane nodes the topology runs.
func (t *Topology) ControlPlaneCount() int { return max(t.ControlPlane.Count, 1) }

// LeaderElection is whether kube-scheduler and kube-controller-manager
// elect a leader: only where there is more than one of each.
func (t *Topology) LeaderElection() bool { return t.ControlPlaneCount() > 1 }

// kubeletSkew applies the version skew policy: a kubelet is never newer
// than the apiserver and at most three minors older.
func kubeletSkew(apiserver, kubelet kubeversion.Version) string {
	return skew("kubelet", apiserver, kubelet)
}

// skew is the version skew policy for a node component (kubelet,
// kube-proxy): never newer than the apiserver, at most three minors older.
func skew(what string, apiserver, v kubeversion.Version) string {
	behind, _ := kubeversion.MinorsBehind(v.Minor(), apiserver.Minor())
	switch {
	case behind < 0:
		return fmt.Sprintf("%s %s is newer than kube-apiserver %s (the version skew policy forbids it)", what, v, apiserver)
	case behind > 3:
		return fmt.Sprintf("%s %s is %d minors older than kube-apiserver %s (the version skew policy allows at most 3)", what, v, behind, apiserver)
	}
	return ""
}

// reservedArgs must be set through their own fields.
var reservedArgs = map[string]string{"feature-gates": "featureGates"}

func checkComponent(where, minor string, c ComponentFlags) []string {
	var p []string
	for arg := range c.ExtraArgs {
		if field, ok := reservedArgs[arg]; ok {
			p = append(p, fmt.Sprintf("%s.extraArgs: set %s through %s.%s", where, arg, where, field))
		}
	}
	for _, flag := range fixtures.AdmissionPluginFlags {
		if v, ok := c.ExtraArgs[flag]; ok && v != "" {
			for _, problem := range fixtures.CheckAdmissionPlugins(minor, v) {
				p = append(p, fmt.Sprintf("%s.extraArgs.%s: %s", where, flag, problem))
			}
		}
	}
	m, err := fixtures.GateMinor(minor, c.ExtraArgs["emulated-version"])
	if err != nil {
		p = append(p, where+": "+err.Error())
	}
	for _, problem := range fixtures.CheckGates(m, c.FeatureGates) {
		p = append(p, where+".featureGates: "+problem)
	}
	return p
}

// checkControlPlaneNodes checks each node's apiserver as it will run, and
// that the apiservers stay within the skew policy of each other (one
// minor; --emulated-version already allows no more).
func (t *Topology) checkControlPlaneNodes(minor string) []string {
	var p []string
	if n := len(t.ControlPlane.Nodes); n > t.ControlPlaneCount() {
		p = append(p, fmt.Sprintf("controlPlane.nodes: %d entries for %d control-plane nodes (controlPlane.count)", n, t.ControlPlaneCount()))
	}
	if len(t.ControlPlane.Nodes) > 0 && !t.ControlPlane.Nodes[0].APIServer.empty() {
		p = append(p, "controlPlane.nodes[0]: the first node runs kubeadm init with controlPlane.apiServer; set its settings there and the others' in controlPlane.nodes[1] on")
	}
	for i := range t.ControlPlane.Nodes {
		p = append(p, checkComponent(fmt.Sprintf("controlPlane.nodes[%d].apiServer", i), minor, t.NodeAPIServer(i))...)
	}
	return p
}

func checkExtraSchedulers(minor string, extra []ExtraScheduler) []string {
	var p []string
	seen := map[string]bool{}
	for i, s := range extra {
		where := fmt.Sprintf("controlPlane.extraSchedulers[%d]", i)
		switch {
		case !dnsLabel.MatchString(s.Name):
			p = append(p, fmt.Sprintf("%s: name %q must be a short DNS label (it is the schedulerName and the static pod's name)", where, s.Name))
		case slices.Contains(reservedStaticPods, s.Name):
			p = append(p, fmt.Sprintf("%s: name %q is the default scheduler's or a control-plane static pod's", where, s.Name))
		case seen[s.Name]:
			p = append(p, fmt.Sprintf("%s: schedulerName %q is used twice", where, s.Name))
		}
		seen[s.Name] = true
		p = append(p, checkComponent(where, minor, ComponentFlags{FeatureGates: s.FeatureGates})...)
	}
	return p
}

func checkKubelet(where, minor string, k Kubelet) []string {
	var p []string
	for arg := range k.ExtraArgs {
		if field, ok := reservedArgs[arg]; ok {
			p = append(p, fmt.Sprintf("%s.extraArgs: set %s through %s.%s", where, arg, where, field))
		}
	}
	if _, ok := k.ExtraArgs["emulated-version"]; ok {
		p = append(p, where+": the kubelet has no --emulated-version")
	}
	for _, problem := range fixtures.CheckGates(minor, k.FeatureGates) {
		p = append(p, where+".featureGates: "+problem)
	}
	return p
}

// Versions lists every kubelet version the topology runs, oldest first.
func (t *Topology) Versions() []kubeversion.Version {
	set := map[kubeversion.Version]bool{}
	for _, pool := range t.Pools() {
		set[pool.PoolVersion()] = true
	}
	return slices.SortedFunc(maps.Keys(set), kubeversion.Compare)
}

// ControlPlaneVersion is the control plane's version (validated by Load).
func (t *Topology) ControlPlaneVersion() kubeversion.Version {
	return kubeversion.MustParse(t.ControlPlane.Version)
}

// PoolVersion is a pool's kubelet version (validated by Load).
func (p Pool) PoolVersion() kubeversion.Version { return kubeversion.MustParse(p.Version) }

// Pools is the control-plane nodes as a pool, then the worker pools.
func (t *Topology) Pools() []Pool {
	cp := Pool{Name: ControlPlanePool, Count: t.ControlPlaneCount(), Version: t.ControlPlane.Version, Kubelet: t.ControlPlane.Kubelet}
	if k := t.ControlPlaneKubeletVersion(); k != t.ControlPlaneVersion() {
		cp.Version, cp.variantOf = t.ControlPlane.KubeletVersion, t.ControlPlaneVersion()
	}
	return append([]Pool{cp}, t.Workers...)
}

// Intent is the pool's kubelet in the oracle's terms, on what its
// runtime release reports.
func (p Pool) Intent() fixtures.Kubelet {
	rt := p.RuntimeRelease().Reports
	rt.CPUManagerPolicy, _ = p.Kubelet.Config["cpuManagerPolicy"].(string)
	return fixtures.Kubelet{Version: p.Version, Gates: p.Kubelet.FeatureGates, Runtime: rt}
}

// RuntimeRelease is the pool's container runtime (validated by Load).
func (p Pool) RuntimeRelease() fixtures.RuntimeRelease {
	r, _ := fixtures.RuntimeByName(p.Runtime)
	return r
}

// NodeKind is what a node image is made for: a kubelet version and a
// runtime, and for a variant image the control plane (and kubeadm) it
// carries beside an older kubelet.
type NodeKind struct {
	Version kubeversion.Version
	Runtime string // fixtures.Runtimes name; never ""
	// ControlPlane is "" unless the image is a variant.
	ControlPlane kubeversion.Version
}

func (k NodeKind) String() string {
	s := string(k.Version)
	if k.Runtime != fixtures.DefaultRuntime {
		s += "+" + k.Runtime
	}
	if k.ControlPlane != "" {
		s = string(k.ControlPlane) + " control plane, kubelet " + s
	}
	return s
}

// Kind is the node image the pool's nodes run.
func (p Pool) Kind() NodeKind {
	return NodeKind{Version: p.PoolVersion(), Runtime: p.RuntimeRelease().Name, ControlPlane: p.variantOf}
}

// Kinds lists every node image the topology runs, in Versions order
// (the default runtime first within a version).
func (t *Topology) Kinds() []NodeKind {
	set := map[NodeKind]bool{}
	for _, pool := range t.Pools() {
		set[pool.Kind()] = true
	}
	return slices.SortedFunc(maps.Keys(set), func(a, b NodeKind) int {
		if c := kubeversion.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		if c := strings.Compare(runtimeRank(a), runtimeRank(b)); c != 0 {
			return c
		}
		return kubeversion.Compare(a.ControlPlane, b.ControlPlane)
	})
}

// runtimeRank sorts the default runtime first.
func runtimeRank(k NodeKind) string {
	if k.Runtime == fixtures.DefaultRuntime {
		return ""
	}
	return k.Runtime
}

// APIServer is the control plane's kube-apiserver in the oracle's terms.
func (t *Topology) APIServer() fixtures.Component { return t.component(t.ControlPlane.APIServer) }

// Scheduler is the control plane's kube-scheduler in the oracle's terms.
func (t *Topology) Scheduler() fixtures.Component { return t.component(t.ControlPlane.Scheduler) }

func (t *Topology) component(c ComponentFlags) fixtures.Component {
	return fixtures.Component{Version: t.ControlPlane.Version, Gates: c.FeatureGates, EmulatedVersion: c.ExtraArgs["emulated-version"]}
}

// NodeAPIServer is the apiserver of control-plane node i as it runs: the
// control plane's with that node's settings laid over it.
func (t *Topology) NodeAPIServer(i int) ComponentFlags {
	base := t.ControlPlane.APIServer
	if i >= len(t.ControlPlane.Nodes) {
		return base
	}
	own := t.ControlPlane.Nodes[i].APIServer
	out := ComponentFlags{FeatureGates: map[string]bool{}, ExtraArgs: map[string]string{}}
	maps.Copy(out.FeatureGates, base.FeatureGates)
	maps.Copy(out.FeatureGates, own.FeatureGates)
	maps.Copy(out.ExtraArgs, base.ExtraArgs)
	for k, v := range own.ExtraArgs {
		if v == "" { // removes the flag
			delete(out.ExtraArgs, k)
		} else {
			out.ExtraArgs[k] = v
		}
	}
	return out
}

// OwnAPIServerSettings are, by control-plane node index, the settings ndfq
// lays over kubeadm's after bring-up on each node whose apiserver does not
// run as the first one does: its gates as they must end up, and the flags
// to set ("" removes one).
func (t *Topology) OwnAPIServerSettings() map[int]ComponentFlags {
	out := map[int]ComponentFlags{}
	first := t.NodeAPIServer(0).describe()
	for i, n := range t.ControlPlane.Nodes {
		if i > 0 && t.NodeAPIServer(i).describe() != first {
			out[i] = ComponentFlags{FeatureGates: t.NodeAPIServer(i).FeatureGates, ExtraArgs: n.APIServer.ExtraArgs}
		}
	}
	return out
}

// APIServersDisagree names the control-plane nodes whose apiserver does not
// run as the first one does: while they do, what a request sees depends on
// which apiserver answers it.
func (t *Topology) APIServersDisagree() []string {
	var out []string
	for _, i := range slices.Sorted(maps.Keys(t.OwnAPIServerSettings())) {
		out = append(out, fmt.Sprintf("control-plane node %d runs %s", i+1, t.NodeAPIServer(i).describe()))
	}
	return out
}

// ForSuites refuses a topology the suites cannot judge: every claim but
// the HA specs' needs one answer per request, and the HA specs open and
// close the window themselves, one apiserver at a time.
func (t *Topology) ForSuites() error {
	if d := t.APIServersDisagree(); len(d) > 0 {
		return fmt.Errorf("topology %s: controlPlane.nodes makes the apiservers disagree from the start (%s), so every admission and placement claim would depend on which apiserver answered: bring it up with `ndfq cluster up` and judge it with `ndfq probe` (which reads every apiserver), or run the suites on a topology whose apiservers agree (ha-1.37's HA specs open and close that window themselves)", t.Name, strings.Join(d, "; "))
	}
	return nil
}

func (c ComponentFlags) empty() bool { return len(c.FeatureGates) == 0 && len(c.ExtraArgs) == 0 }

// describe is a component's settings as flags, for messages and reports.
func (c ComponentFlags) describe() string {
	var parts []string
	if len(c.FeatureGates) > 0 {
		parts = append(parts, "--feature-gates="+FormatGates(c.FeatureGates))
	}
	for _, k := range slices.Sorted(maps.Keys(c.ExtraArgs)) {
		parts = append(parts, "--"+k+"="+c.ExtraArgs[k])
	}
	if len(parts) == 0 {
		return "kubeadm's flags"
	}
	return strings.Join(parts, " ")
}

// ExtraSchedulerNames are the extra schedulers' schedulerNames.
func (t *Topology) ExtraSchedulerNames() []string {
	var out []string
	for _, s := range t.ControlPlane.ExtraSchedulers {
		out = append(out, s.Name)
	}
	return out
}

// NodeCount is the number of nodes, control plane included.
func (t *Topology) NodeCount() int {
	n := t.ControlPlaneCount()
	for _, p := range t.Workers {
		n += p.Count
	}
	return n
}

// SourceFile is where a shipped topology lives in the repository.
func SourceFile(name string) string { return filepath.Join("clusters", "topologies", name+".yaml") }

// FormatGates renders gates as a --feature-gates value, sorted.
func FormatGates(g map[string]bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(g)) {
		parts = append(parts, fmt.Sprintf("%s=%t", k, g[k]))
	}
	return strings.Join(parts, ",")
}
