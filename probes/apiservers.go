package probes

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
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

// identityLabel marks each apiserver's identity Lease in kube-system.
const identityLabel = "apiserver.kubernetes.io/identity=kube-apiserver"

// identityLive is how recently an identity Lease must have been renewed
// for its apiserver to count as running: each renews its own every 10 s,
// and a gone one's Lease stays until it expires (an hour).
const identityLive = time.Minute

// APIServerIdentities are the apiservers running now, by their identity
// Leases: how many there are whatever address the cluster shows (one
// load balancer, one VIP advertised by all).
func APIServerIdentities(ctx context.Context, cs kubernetes.Interface, now time.Time) ([]string, error) {
	leases, err := cs.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: identityLabel})
	if err != nil {
		return nil, fmt.Errorf("apiserver identity Leases in %s: %w", metav1.NamespaceSystem, err)
	}
	var out []string
	for _, l := range leases.Items {
		if l.Spec.RenewTime != nil && now.Sub(l.Spec.RenewTime.Time) <= identityLive {
			out = append(out, cmp.Or(l.Labels[corev1.LabelHostname], l.Name))
		}
	}
	slices.Sort(out)
	return out, nil
}

// StaticAPIServerAddresses are each kube-apiserver static pod's own
// address (kubeadm's and its kin's: component=kube-apiserver in
// kube-system, on the host network): where every apiserver advertises one
// shared address, these still reach each one.
func StaticAPIServerAddresses(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	pods, err := cs.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-apiserver"})
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver pods in %s: %w", metav1.NamespaceSystem, err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		// kube-apiserver's --secure-port defaults to 6443.
		out = append(out, "https://"+net.JoinHostPort(p.Status.PodIP, securePort(p, "6443")))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
