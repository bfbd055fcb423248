package probes

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerEndpoints lists every kube-apiserver of the cluster as
// https://IP:PORT, sorted: the endpoints of the default/kubernetes
// Service, which each apiserver keeps while it runs. Behind a load
// balancer these are the addresses a client never sees.
func APIServerEndpoints(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	list, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=kubernetes",
	})
	if err != nil {
		return nil, fmt.Errorf("endpoints of the kubernetes Service: %w", err)
	}
	var out []string
	for _, s := range list.Items {
		port := int32(443)
		for _, p := range s.Ports {
			if p.Port != nil && (p.Name == nil || *p.Name == "https") {
				port = *p.Port
			}
		}
		for _, ep := range s.Endpoints {
			for _, addr := range ep.Addresses {
				out = append(out, "https://"+net.JoinHostPort(addr, strconv.Itoa(int(port))))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the kubernetes Service in %s lists no apiserver", metav1.NamespaceDefault)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// AtAPIServer is cfg aimed at one apiserver endpoint instead of the
// cluster's address (a load balancer), with the same credentials and CA:
// an apiserver's serving certificate names its own address.
func AtAPIServer(cfg *rest.Config, endpoint string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = endpoint
	return c
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
func APIServerGatesAt(ctx context.Context, cfg *rest.Config, endpoint string) (Gates, error) {
	cs, err := kubernetes.NewForConfig(AtAPIServer(cfg, endpoint))
	if err != nil {
		return nil, err
	}
	g, err := APIServerGates(ctx, cs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", endpoint, err)
	}
	return g, nil
}
