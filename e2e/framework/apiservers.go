package framework

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// APIServer is one kube-apiserver of the control plane.
type APIServer struct {
	Node     string // its control-plane node
	Endpoint string // https://IP:PORT, past any load balancer
}

// APIServers pairs every apiserver the cluster lists (the kubernetes
// Service's endpoints) with its control-plane node, by address; there is
// one per control-plane node of the topology.
func (e *Env) APIServers(ctx context.Context) []APIServer {
	GinkgoHelper()
	endpoints, err := probes.APIServerEndpoints(ctx, e.Clientset)
	Expect(err).NotTo(HaveOccurred())
	nodeAt := map[string]string{}
	for _, n := range e.NodesOfPool(ctx, topology.ControlPlanePool) {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				nodeAt[a.Address] = n.Name
			}
		}
	}
	var out []APIServer
	for _, ep := range endpoints {
		node, ok := nodeAt[EndpointHost(ep)]
		Expect(ok).To(BeTrue(), "apiserver endpoint %s is on no control-plane node (addresses %v)", ep, slices.Sorted(maps.Keys(nodeAt)))
		out = append(out, APIServer{Node: node, Endpoint: ep})
	}
	Expect(out).To(HaveLen(e.Topology.ControlPlaneCount()), "apiservers listed by the kubernetes Service")
	return out
}

// Clientset is a client of this apiserver alone.
func (a APIServer) Clientset(e *Env) kubernetes.Interface {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(probes.AtAPIServer(e.Cluster.Client.RESTConfig(), a.Endpoint))
	Expect(err).NotTo(HaveOccurred())
	return cs
}

// Instance is the apiserver's address as the suite's Prometheus labels its
// series (instance, from the kubernetes Service's endpoints): host:port.
func (a APIServer) Instance() string { return strings.TrimPrefix(a.Endpoint, "https://") }

// SetAPIServerAt restarts one apiserver as want (its gates and
// --emulated-version) with args set as well (a "" value removes a flag;
// the change must alter its manifest, or nothing restarts), and waits
// (wait-pod-running) until its mirror pod runs the new manifest and is
// Ready, then (wait-metrics) until its own /metrics report the gates. The
// others keep running: the window of a rolling change.
func (e *Env) SetAPIServerAt(ctx context.Context, a APIServer, want fixtures.Component, args map[string]string) {
	GinkgoHelper()
	node, err := e.Cluster.KindNode(a.Node)
	Expect(err).NotTo(HaveOccurred())
	e.evidence.node(a.Node)
	flags := map[string]string{"emulated-version": want.EmulatedVersion}
	maps.Copy(flags, args)
	Expect(e.Cluster.RestartStaticPod(ctx, a.Node, KubeAPIServer, want.Gates, flags)).To(Succeed())
	ndf := fixtures.NodeDeclaredFeatures
	Expect(wait.Until(ctx, wait.Metrics, fmt.Sprintf("kube-apiserver at %s to report %s %s", a.Endpoint, ndf, map[bool]string{true: "on", false: "off"}[want.Enables(ndf)]), func(ctx context.Context) (bool, string, error) {
		g, err := APIServerGatesAt(ctx, e.Cluster.Client.RESTConfig(), a.Endpoint)
		if err != nil {
			return false, err.Error(), nil
		}
		return g.Enabled(ndf) == want.Enables(ndf), g.Describe(ndf), nil
	})).To(Succeed())
	// The scheduler the suites read runs on the first control-plane node,
	// and authorizes /metrics through the apiserver beside it.
	if a.Node == kindconfig.NodeName(e.Cluster.Name, "control-plane", 0) && e.Shared.SchedulerMetricURL != "" {
		e.WaitSchedulerMetrics(ctx, node)
	}
}

// EndpointHost is the address of an endpoint from APIServerEndpoints.
func EndpointHost(endpoint string) string {
	host, _, err := net.SplitHostPort(strings.TrimPrefix(endpoint, "https://"))
	if err != nil {
		return endpoint
	}
	return host
}

// OneConnectionPerRequest is cfg with connection reuse off: every request
// dials anew, so a load balancer in front of several apiservers picks one
// for each request, as it does for many clients (client-go otherwise keeps
// one connection, and so one apiserver, for all of them).
func OneConnectionPerRequest(cfg *rest.Config) (*rest.Config, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	// A custom transport carries the TLS settings itself.
	c.TLSClientConfig = rest.TLSClientConfig{}
	c.Transport = &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment}
	return c, nil
}

// APIServerGatesAt reads one apiserver's gates from its own /metrics.
func APIServerGatesAt(ctx context.Context, cfg *rest.Config, endpoint string) (probes.Gates, error) {
	cs, err := kubernetes.NewForConfig(probes.AtAPIServer(cfg, endpoint))
	if err != nil {
		return nil, err
	}
	g, err := probes.APIServerGates(ctx, cs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", endpoint, err)
	}
	return g, nil
}
