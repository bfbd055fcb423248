package probes

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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

// routes reads the routes of the run's execs from the apiservers' counters.
type routes struct {
	cfg     *rest.Config
	cs      kubernetes.Interface
	readers map[string]kubernetes.Interface // every apiserver, or the cluster's address alone
	denied  string                          // why the run may not exec ("" when it may)
}

// routeCandidate is a running probe pod on a pool's node, to exec into.
type routeCandidate struct {
	pool, node, pod string
	declares        bool
}

// check reads the route of one exec into each candidate. The counters
// name no pod, so execs are told apart by batch: the nodes that declare
// ExtendWebSocketsToKubelet at once, then the others (two reads of every
// apiserver's /metrics a batch, not two per pool); a batch whose counts
// did not all move one way (another client streamed meanwhile) is asked
// again one exec at a time.
func (r *routes) check(ctx context.Context, ns string, cands []routeCandidate) []PoolRoute {
	var out []PoolRoute
	for _, declares := range []bool{true, false} {
		var batch []routeCandidate
		for _, c := range cands {
			if c.declares == declares {
				batch = append(batch, c)
			}
		}
		if len(batch) == 0 {
			continue
		}
		if routes, ok := r.batch(ctx, ns, batch); ok {
			out = append(out, routes...)
			continue
		}
		for _, c := range batch {
			routes, _ := r.batch(ctx, ns, []routeCandidate{c})
			out = append(out, routes...)
		}
	}
	slices.SortFunc(out, func(a, b PoolRoute) int { return strings.Compare(a.Pool, b.Pool) })
	return out
}

// batch execs into every candidate at once between two reads of the
// counters; ok is false where the counts do not say one route for each.
func (r *routes) batch(ctx context.Context, ns string, batch []routeCandidate) ([]PoolRoute, bool) {
	out := make([]PoolRoute, len(batch))
	for i, c := range batch {
		out[i] = PoolRoute{Pool: c.pool, Node: c.node, Declares: c.declares}
	}
	unchecked := func(why string) ([]PoolRoute, bool) {
		for i := range out {
			out[i].Unchecked = why
		}
		return out, len(batch) == 1
	}
	if r.denied != "" {
		return unchecked(r.denied)
	}
	before, err := r.counts(ctx)
	if err != nil {
		return unchecked(err.Error())
	}
	var wg sync.WaitGroup
	for _, c := range batch {
		wg.Go(func() { execOnce(ctx, r.cfg, r.cs, ns, c.pod) })
	}
	wg.Wait()
	after, err := r.counts(ctx)
	if err != nil {
		return unchecked(err.Error())
	}
	grew := map[string]float64{}
	for _, typ := range []string{fixtures.ProxiedToKubelet, fixtures.TranslatedAtAPIServer} {
		k := fixtures.StreamExec.Subresource() + "/" + typ
		grew[typ] = after[k] - before[k]
	}
	n := float64(len(batch))
	switch {
	case grew[fixtures.ProxiedToKubelet] == n && grew[fixtures.TranslatedAtAPIServer] == 0:
		for i := range out {
			out[i].Route = fixtures.ProxiedToKubelet
		}
	case grew[fixtures.TranslatedAtAPIServer] == n && grew[fixtures.ProxiedToKubelet] == 0:
		for i := range out {
			out[i].Route = fixtures.TranslatedAtAPIServer
		}
	case len(batch) == 1:
		out[0].Route = RouteBetween(before, after, fixtures.StreamExec)
		if out[0].Route == "" {
			out[0].Unchecked = "no apiserver counted the exec in apiserver_websocket_streaming_requests_total (one not read, or it records no route)"
		}
	default:
		return out, false
	}
	return out, true
}

// counts sums the route counters of every apiserver the run reads.
func (r *routes) counts(ctx context.Context) (map[string]float64, error) {
	return SumRouteCounts(ctx, r.readers)
}

// routeCheckCommand is what the exec asks to run: no image has it, so the
// runtime refuses it at once and the stream ends (a pause binary would
// pause); the apiserver counted the route when it connected, before.
const routeCheckCommand = "/ndfq-probe-route-check"

// execOnce runs one exec over WebSocket, as kubectl does, bounded by
// wait-stream-op; what the command does is not the question.
func execOnce(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string) {
	ctx, cancel := context.WithTimeout(ctx, wait.MustGet(wait.StreamOp).Timeout)
	defer cancel()
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: []string{routeCheckCommand}, Stdout: true, Stderr: true}, scheme.ParameterCodec)
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
