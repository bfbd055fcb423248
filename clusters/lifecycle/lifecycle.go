// Package lifecycle brings a topology up as a kind cluster and takes it
// down: render, create through the kind library, ndfq's own CNI, a bounded
// wait for every node Ready, kubeconfig in the artifacts folder, logs on
// failure, and cleanup on failure and interrupt unless asked to keep it.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/sh"
	"github.com/ndfq/ndfq/internal/wait"
)

// DockerNetwork keeps ndfq's clusters off kind's shared "kind" network, so
// taking the last one down removes the network too.
const DockerNetwork = "ndfq"

// Cluster is a running topology.
type Cluster struct {
	Name       string
	Topology   *topology.Topology // nil for a plain cluster (UpPlain)
	Kubeconfig string
	Client     klient.Client
	Provider   *cluster.Provider

	plainNodes     int                 // a plain cluster's node count
	plainKubeProxy kubeversion.Version // a plain cluster's kube-proxy ndfq deploys
}

// kubeProxyToDeploy is the kube-proxy ndfq deploys in place of kubeadm's.
func (c *Cluster) kubeProxyToDeploy() (kubeversion.Version, bool) {
	if c.Topology == nil {
		return c.plainKubeProxy, c.plainKubeProxy != ""
	}
	return c.Topology.DeploysKubeProxy()
}

// NodeCount is how many nodes the cluster has when it is up.
func (c *Cluster) NodeCount() int {
	if c.Topology == nil {
		return c.plainNodes
	}
	return c.Topology.NodeCount()
}

// UpInput says what to bring up and how.
type UpInput struct {
	Topology    *topology.Topology
	Images      nodeimage.Result
	Artifacts   string
	UseExisting bool // reuse a running cluster after checking it is the topology
	Log         *progress.Logger
}

// NewProvider is the kind provider ndfq uses: docker, on ndfq's network.
func NewProvider() *cluster.Provider {
	_ = os.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", DockerNetwork)
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindcmd.NewLogger()))
}

// KubeconfigPath is where a cluster's kubeconfig goes: never ~/.kube/config.
func KubeconfigPath(artifacts, name string) string {
	return filepath.Join(artifacts, name+".kubeconfig")
}

// Up creates the cluster (or adopts it with UseExisting). When creation
// fails or ctx is cancelled it exports kind logs into Artifacts and deletes
// what was created.
func Up(ctx context.Context, in UpInput) (c *Cluster, err error) {
	t := in.Topology
	name := kindconfig.ClusterName(t)
	p := NewProvider()
	c = &Cluster{Name: name, Topology: t, Kubeconfig: KubeconfigPath(in.Artifacts, name), Provider: p}
	if err := os.MkdirAll(in.Artifacts, 0o755); err != nil {
		return nil, err
	}
	exists, err := clusterExists(p, name)
	if err != nil {
		return nil, err
	}
	if in.UseExisting {
		if !exists {
			return nil, fmt.Errorf("USE_EXISTING_CLUSTER: no kind cluster %q is running", name)
		}
		if err := p.ExportKubeConfig(name, c.Kubeconfig, false); err != nil {
			return nil, err
		}
		if err := c.connect(); err != nil {
			return nil, err
		}
		if err := c.Conforms(ctx); err != nil {
			return nil, fmt.Errorf("USE_EXISTING_CLUSTER: cluster %q does not match topology %s: %w", name, t.Name, err)
		}
		in.Log.Printf("reusing cluster %s: versions, pools and gates match topology %s", name, t.Name)
		return c, nil
	}
	if exists {
		in.Log.Printf("deleting leftover cluster %s (set USE_EXISTING_CLUSTER=true to reuse it instead)", name)
		if err := c.Down(in.Log); err != nil {
			return nil, err
		}
	}
	cfg, err := kindconfig.Render(t, kindconfig.Options{
		Images: in.Images, CgroupV1: kindconfig.HostIsCgroupV1(), WorkDir: filepath.Join(in.Artifacts, name),
	})
	if err != nil {
		return nil, err
	}
	raw, err := saveConfig(cfg, in.Artifacts)
	if err != nil {
		return nil, err
	}
	return c, c.create(ctx, raw, in.Artifacts, in.Log, fmt.Sprintf("%d nodes, kubelets %s", t.NodeCount(), t.Versions()))
}

// UpPlain brings up a cluster from a plain kind config (kindconfig.Plain),
// as a kind user would, with the pod network this host needs: a cluster
// ndfq did not shape, for the probe to qualify. It replaces a leftover
// cluster of the same name. A kubeProxy version other than "" is deployed
// by ndfq in place of kubeadm's (a variant control-plane image's own
// kube-proxy may not exist).
func UpPlain(ctx context.Context, cfg *v1alpha4.Cluster, kubeProxy kubeversion.Version, artifacts string, log *progress.Logger) (*Cluster, error) {
	c := &Cluster{Name: cfg.Name, Kubeconfig: KubeconfigPath(artifacts, cfg.Name), Provider: NewProvider(), plainNodes: len(cfg.Nodes), plainKubeProxy: kubeProxy}
	if kubeProxy != "" {
		cfg.Networking.KubeProxyMode = kindconfig.NoKubeProxy
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return nil, err
	}
	if exists, err := clusterExists(c.Provider, c.Name); err != nil {
		return nil, err
	} else if exists {
		if err := c.Down(log); err != nil {
			return nil, err
		}
	}
	raw, err := saveConfig(cfg, artifacts)
	if err != nil {
		return nil, err
	}
	return c, c.create(ctx, raw, artifacts, log, fmt.Sprintf("%d nodes, plain kind config", len(cfg.Nodes)))
}

// saveConfig renders the kind config and keeps it in artifacts as
// NAME.kind.yaml, the file a user can hand to `kind create cluster`.
func saveConfig(cfg *v1alpha4.Cluster, artifacts string) ([]byte, error) {
	raw, err := kindconfig.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return raw, os.WriteFile(filepath.Join(artifacts, cfg.Name+".kind.yaml"), raw, 0o644)
}

// create makes the kind cluster from raw, its pod network, and waits for
// every node Ready; on failure or interrupt it leaves logs in artifacts
// and deletes what was made.
func (c *Cluster) create(ctx context.Context, raw []byte, artifacts string, log *progress.Logger, what string) (err error) {
	defer func() {
		if err == nil {
			return
		}
		log.Printf("bring-up failed: %v", err)
		if ctx.Err() == nil { // an interrupted run wants out fast, not logs
			c.CollectLogs(log, artifacts)
		}
		if derr := c.Down(log); derr != nil {
			log.Printf("cleanup after failure: %v", derr)
		}
	}()
	done := log.Step("create kind cluster %s (%s)", c.Name, what)
	err = createInterruptible(ctx, c.Provider, c.Name, raw, c.Kubeconfig)
	done(err)
	if err != nil {
		return err
	}
	if err := c.connect(); err != nil {
		return err
	}
	done = log.Step("pod network (ptp + host-local + routes)")
	err = c.setupNetwork(ctx)
	done(err)
	if err != nil {
		return err
	}
	done = log.Step("wait for %d nodes Ready", c.NodeCount())
	err = c.WaitNodesReady(ctx)
	done(err)
	if err != nil {
		return err
	}
	if v, ok := c.kubeProxyToDeploy(); ok {
		done = log.Step("kube-proxy %s (kubeadm %s's addon phase, in place of the control plane's kubeadm's)", v, v)
		err = c.deployKubeProxy(ctx, v)
		done(err)
		if err != nil {
			return err
		}
	}
	if c.Topology == nil {
		return nil
	}
	if d := c.Topology.APIServersDisagree(); len(d) > 0 {
		done = log.Step("control-plane nodes' own apiserver settings (%s)", strings.Join(d, "; "))
		err = c.setOwnAPIServers(ctx)
		done(err)
		if err != nil {
			return err
		}
	}
	if len(c.Topology.ControlPlane.ExtraSchedulers) == 0 {
		return nil
	}
	done = log.Step("extra schedulers %s", c.Topology.ExtraSchedulerNames())
	err = c.startExtraSchedulers(ctx)
	done(err)
	return err
}

func clusterExists(p *cluster.Provider, name string) (bool, error) {
	names, err := p.List()
	if err != nil {
		return false, fmt.Errorf("list kind clusters: %w", err)
	}
	for _, n := range names {
		if n == name {
			return true, nil
		}
	}
	return false, nil
}

// createInterruptible runs kind's Create, which takes no context; on
// cancellation it returns at once and the deferred cleanup deletes
// whatever kind has made so far.
func createInterruptible(ctx context.Context, p *cluster.Provider, name string, raw []byte, kubeconfig string) error {
	errc := make(chan error, 1)
	go func() {
		errc <- p.Create(name,
			cluster.CreateWithRawConfig(raw),
			cluster.CreateWithWaitForReady(0), // kind waits for control planes only; ndfq waits for all
			cluster.CreateWithKubeconfigPath(kubeconfig),
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false),
		)
	}()
	select {
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("kind create: %w", err)
		}
		return nil
	case <-ctx.Done():
		// Give kind a moment to stop starting containers before the delete.
		select {
		case <-errc: //nolint:errcheck // kind's own error is moot: the run was interrupted
		case <-time.After(5 * time.Second):
		}
		return fmt.Errorf("kind create interrupted: %w", ctx.Err())
	}
}

func (c *Cluster) connect() error {
	kc, err := klient.NewWithKubeConfigFile(c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("client for %s: %w", c.Kubeconfig, err)
	}
	c.Client = kc
	return nil
}

// Nodes lists the cluster's Node objects.
func (c *Cluster) Nodes(ctx context.Context) ([]corev1.Node, error) {
	var list corev1.NodeList
	if err := c.Client.Resources().List(ctx, &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// WaitNodesReady waits (wait-nodes) until the topology's node count is Ready.
func (c *Cluster) WaitNodesReady(ctx context.Context) error {
	want := c.NodeCount()
	return wait.Until(ctx, wait.Nodes, fmt.Sprintf("%d nodes Ready", want), func(ctx context.Context) (bool, string, error) {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		var notReady []string
		for _, n := range nodes {
			if !wait.NodeReady(n) {
				notReady = append(notReady, n.Name)
			}
		}
		if len(nodes) == want && len(notReady) == 0 {
			return true, "", nil
		}
		return false, fmt.Sprintf("%d/%d nodes registered, not Ready: %s", len(nodes), want, strings.Join(notReady, ",")), nil
	})
}

// Down deletes the cluster, and ndfq's docker network once no cluster uses it.
func (c *Cluster) Down(log *progress.Logger) error {
	done := log.Step("delete kind cluster %s", c.Name)
	err := c.Provider.Delete(c.Name, c.Kubeconfig)
	done(err)
	RemoveNetworkIfUnused(log)
	return err
}

// RemoveNetworkIfUnused removes ndfq's docker network when nothing is attached.
func RemoveNetworkIfUnused(log *progress.Logger) {
	out, err := sh.Output(context.Background(), "docker", "network", "inspect", "-f", "{{len .Containers}}", DockerNetwork)
	if err != nil || strings.TrimSpace(string(out)) != "0" {
		return
	}
	if err := sh.Run(context.Background(), "docker", "network", "rm", DockerNetwork); err == nil {
		log.Printf("removed docker network %s", DockerNetwork)
	}
}

// CollectLogs exports kind's logs (every node's journal, containers, pods)
// into artifacts/<cluster>-logs.
func (c *Cluster) CollectLogs(log *progress.Logger, artifacts string) {
	dir := filepath.Join(artifacts, c.Name+"-logs")
	done := log.Step("export kind logs to %s", dir)
	err := c.Provider.CollectLogs(c.Name, dir)
	done(err)
}

// ErrNotConform is returned when a running cluster is not its topology.
var ErrNotConform = errors.New("cluster does not match topology")

// SchedulerMetricsURL is kube-scheduler's /metrics on the host port kind
// published for it (127.0.0.1 only): the one on the control-plane node
// that holds the kube-scheduler Lease (leader election runs where there
// are several), else the first control-plane node's.
func (c *Cluster) SchedulerMetricsURL(ctx context.Context) (string, error) {
	cp := kindconfig.NodeName(c.Name, "control-plane", 0)
	var lease coordinationv1.Lease
	if err := c.Client.Resources(metav1.NamespaceSystem).Get(ctx, "kube-scheduler", metav1.NamespaceSystem, &lease); err == nil && lease.Spec.HolderIdentity != nil {
		// The holder is "<hostname>_<uuid>"; a kind node's hostname is its container's name.
		if host, _, ok := strings.Cut(*lease.Spec.HolderIdentity, "_"); ok && strings.HasPrefix(host, c.Name+"-control-plane") {
			cp = host
		}
	}
	out, err := sh.Output(ctx, "docker", "port", cp, fmt.Sprintf("%d/tcp", kindconfig.SchedulerMetricsPort))
	if err != nil {
		return "", err
	}
	hostPort := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if hostPort == "" {
		return "", fmt.Errorf("kube-scheduler's port %d is not published on %s", kindconfig.SchedulerMetricsPort, cp)
	}
	return "https://" + hostPort + "/metrics", nil
}

// Attach returns a handle on a running cluster from its kubeconfig.
func Attach(t *topology.Topology, kubeconfig string) (*Cluster, error) {
	c := &Cluster{Name: kindconfig.ClusterName(t), Topology: t, Kubeconfig: kubeconfig, Provider: NewProvider()}
	return c, c.connect()
}

// LoadImageArchive loads an image archive into every node's containerd,
// as `kind load image-archive` does; with roles (kind's "control-plane",
// "worker"), into the nodes of those roles only.
func (c *Cluster) LoadImageArchive(path string, roles ...string) error {
	list, err := c.Provider.ListInternalNodes(c.Name)
	if err != nil {
		return err
	}
	// Every node at once, as kind load image-archive does: one at a time,
	// ndfq's image took 26 s for skew-1.37's 10 nodes.
	var g errgroup.Group
	for _, n := range list {
		if role, err := n.Role(); len(roles) > 0 && (err != nil || !slices.Contains(roles, role)) {
			continue
		}
		g.Go(func() error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := nodeutils.LoadImageArchive(n, f); err != nil {
				return fmt.Errorf("load %s into %s: %w", path, n, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// KindNode is the kind node (container) of a Node name, to run commands in.
func (c *Cluster) KindNode(name string) (nodes.Node, error) {
	list, err := c.Provider.ListInternalNodes(c.Name)
	if err != nil {
		return nil, err
	}
	for _, n := range list {
		if n.String() == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no node %s", c.Name, name)
}

// BuildAndUp builds (or reuses from cacheDir) the node images the topology
// needs, then brings it up: what `ndfq cluster up` and the suites both do.
func BuildAndUp(ctx context.Context, cacheDir string, in UpInput) (*Cluster, error) {
	// A release the oracle does not hold to its own sources is refused
	// before anything is built (cached: `topology validate` made the check).
	if err := in.Topology.CheckOracle(ctx, cacheDir, in.Log.Printf); err != nil {
		return nil, err
	}
	b := &nodeimage.Builder{Cache: nodeimage.Cache{Dir: cacheDir}, Log: in.Log}
	images, err := b.Build(ctx, nodeimage.PlanFor(in.Topology))
	if err != nil {
		return nil, fmt.Errorf("node images: %w", err)
	}
	in.Images = images
	return Up(ctx, in)
}
