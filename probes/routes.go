package probes

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
)

// ExtendWebSocketsToKubelet has no pod field: the apiserver decides, per
// exec, attach or port-forward, whether to hand a WebSocket stream to the
// kubelet (the node declares the feature) or to translate it itself, and
// counts which in apiserver_websocket_streaming_requests_total when it
// connects, before the kubelet is asked. So one exec into a running probe
// pod per pool, between two reads of every apiserver's counter, shows the
// route, whatever the command does in the container.

// PoolRoute is the route the apiservers took for an exec into a pod on a
// pool's node.
type PoolRoute struct {
	Pool     string `json:"pool"`
	Node     string `json:"node"`
	Declares bool   `json:"declares"` // the node declares ExtendWebSocketsToKubelet
	// Route is the proxy type whose count grew (fixtures.ProxiedToKubelet
	// or TranslatedAtAPIServer), "" where none did, "a+b" where both did
	// (another client streamed meanwhile).
	Route string `json:"route"`
	// Unchecked says why no route was read ("" when it was).
	Unchecked string `json:"unchecked,omitempty"`
}

// execAccess lets the probe exec into its own pods (config/rbac/kubelet.yaml).
func execAccess(ns string) []authzv1.ResourceAttributes {
	return []authzv1.ResourceAttributes{
		{Verb: "get", Resource: "pods", Subresource: "exec", Namespace: ns},
		{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: ns},
	}
}

// routes reads the route of one exec at a time: the counters are the
// apiservers', shared by every pool of the run.
type routes struct {
	mu      sync.Mutex
	cfg     *rest.Config
	cs      kubernetes.Interface
	readers map[string]kubernetes.Interface // every apiserver, or the cluster's address alone
	denied  string                          // why the run may not exec ("" when it may)
}

// routeOf execs into pod (running on node) and says how the apiservers routed it.
func (r *routes) routeOf(ctx context.Context, ns, pool, node, pod string, declares bool) PoolRoute {
	out := PoolRoute{Pool: pool, Node: node, Declares: declares}
	if r.denied != "" {
		out.Unchecked = r.denied
		return out
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	before, err := r.counts(ctx)
	if err != nil {
		out.Unchecked = err.Error()
		return out
	}
	execOnce(ctx, r.cfg, r.cs, ns, pod)
	after, err := r.counts(ctx)
	if err != nil {
		out.Unchecked = err.Error()
		return out
	}
	out.Route = RouteBetween(before, after, fixtures.StreamExec)
	if out.Route == "" {
		out.Unchecked = "no apiserver counted the exec in apiserver_websocket_streaming_requests_total (one not read, or it records no route)"
	}
	return out
}

// counts sums the route counters of every apiserver the run reads.
func (r *routes) counts(ctx context.Context) (map[string]float64, error) {
	return sumRouteCounts(ctx, r.readers)
}

// execOnce runs one exec over WebSocket, as kubectl does, bounded by
// wait-stream-op; what the command does is not the question (the probe
// image may have no shell: the pause image's own binary is asked its
// version).
func execOnce(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string) {
	ctx, cancel := context.WithTimeout(ctx, wait.MustGet(wait.StreamOp).Timeout)
	defer cancel()
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: []string{"/pause", "-v"}, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return
	}
	_ = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard})
}

// newRoutes is the run's route reader, or nil where the control plane
// records no route (before 1.36, or its translation gate off).
func (p *prober) newRoutes(ctx context.Context, cfg *rest.Config) (*routes, error) {
	if !fixtures.RoutesStreams(p.minor) || !p.api.Enabled(fixtures.TranslateStreamCloseWebsocketRequests) {
		return nil, nil
	}
	r := &routes{cfg: cfg, cs: p.cs, readers: p.apiservers}
	if len(r.readers) < 2 {
		r.readers = map[string]kubernetes.Interface{"at the cluster's address": p.cs}
	}
	for _, attr := range execAccess(p.ns) {
		ok, err := allowed(ctx, p.cs, authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr})
		if err != nil {
			return nil, err
		}
		if !ok {
			r.denied = fmt.Sprintf("the identity may not %s pods/exec in %s (config/rbac/kubelet.yaml grants it): the route the apiservers take for WebSocket streams to the pool's nodes is unchecked", attr.Verb, p.ns)
			break
		}
	}
	return r, nil
}
