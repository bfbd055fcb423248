package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/klog/v2"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// StreamOutcome is what one streaming operation on a pod showed.
type StreamOutcome struct {
	Op     fixtures.StreamOp `json:"op"`
	Served bool              `json:"served"`
	// Detail is what came back, or why nothing did.
	Detail string `json:"detail"`
	// Route is how the apiserver recorded routing it (fixtures.ProxiedToKubelet
	// or TranslatedAtAPIServer), "" where it recorded none.
	Route string `json:"route,omitempty"`
}

// Stream makes one operation on a fixtures.StreamingPod's main container
// as kubectl does since 1.30: exec and attach over WebSocket (RemoteCommand
// v5), port-forward over WebSocket tunnelling, logs over plain HTTP. None
// falls back to SPDY: a kubelet that cannot speak what the apiserver hands
// it must show. Each is bounded by wait-stream-op.
func Stream(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string, op fixtures.StreamOp) StreamOutcome {
	ctx, cancel := context.WithTimeout(ctx, wait.MustGet(wait.StreamOp).Timeout)
	defer cancel()
	var got, want string
	var err error
	switch op {
	case fixtures.StreamExec:
		want = fixtures.StreamExecLine
		got, err = execEcho(ctx, cfg, cs, ns, pod)
	case fixtures.StreamAttach:
		want = fixtures.StreamAttachLine
		got, err = attachEcho(ctx, cfg, cs, ns, pod)
	case fixtures.StreamPortForward:
		want = fixtures.StreamForwardLine
		got, err = forwardRead(ctx, cfg, cs, ns, pod)
	case fixtures.StreamLogs:
		want = fixtures.StreamLogLine
		var raw []byte
		raw, err = cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
		got = string(raw)
	default:
		err = fmt.Errorf("no streaming operation %q", op)
	}
	o := StreamOutcome{Op: op, Detail: strings.TrimSpace(got)}
	switch {
	case err != nil:
		o.Detail = fmt.Sprintf("%s (after %q)", err, o.Detail)
	case !strings.Contains(got, want):
		o.Detail = fmt.Sprintf("answered %q, not %q", o.Detail, want)
	default:
		o.Served = true
	}
	return o
}

// execEcho runs echo in the container.
func execEcho(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string) (string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "main", Command: []string{"echo", fixtures.StreamExecLine}, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return "", err
	}
	// One writer each: the executor copies stdout and stderr at once, and
	// a shared bytes.Buffer lost the output of 17 in 60 execs.
	var out, errOut bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	return out.String() + errOut.String(), err
}

// attachEcho attaches to the container, writes a line to its stdin and
// waits for its echo on stdout; the attach then ends by cancel (the
// container keeps its stdin).
func attachEcho(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string) (string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: "main", Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, req.URL().String())
	if err != nil {
		return "", err
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stdin, feed := io.Pipe()
	out := &untilLine{want: fixtures.StreamAttachLine, seen: make(chan struct{})}
	done := make(chan error, 1)
	// The attach ends by cancel: the executor's complaints about the closed
	// connection are that end, not news.
	quiet := klog.NewContext(actx, logr.Discard())
	go func() {
		done <- ex.StreamWithContext(quiet, remotecommand.StreamOptions{Stdin: stdin, Stdout: out, Stderr: out})
	}()
	go func() { _, _ = io.WriteString(feed, fixtures.StreamAttachLine+"\n") }()
	select {
	case <-out.seen:
		cancel()
		_ = feed.Close()
		select { // the attach ends with its context; its bound still holds
		case err := <-done:
			_ = err // the cancel's own
		case <-ctx.Done():
		}
		return out.String(), nil
	case err := <-done:
		_ = feed.Close()
		if err == nil {
			err = fmt.Errorf("attach ended before the echo")
		}
		return out.String(), err
	case <-ctx.Done():
		_ = feed.Close()
		return out.String(), ctx.Err()
	}
}

// untilLine collects output and closes seen once it holds want.
type untilLine struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (u *untilLine) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.buf.Write(p)
	if strings.Contains(u.buf.String(), u.want) {
		u.once.Do(func() { close(u.seen) })
	}
	return len(p), nil
}

func (u *untilLine) String() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.buf.String()
}

// forwardRead forwards a local port to the pod's fixtures.StreamPort over
// WebSocket tunnelling and reads the line the pod answers with.
func forwardRead(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string) (string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward")
	dialer, err := portforward.NewSPDYOverWebsocketDialer(req.URL(), cfg)
	if err != nil {
		return "", err
	}
	ready := make(chan struct{})
	var errOut bytes.Buffer
	fw, err := portforward.NewOnAddressesWithContext(ctx, dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(fixtures.StreamPort)}, ready, io.Discard, &errOut)
	if err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-done:
		return errOut.String(), fmt.Errorf("port-forward ended before it was ready: %w", err)
	case <-ctx.Done():
		return errOut.String(), ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return "", fmt.Errorf("port-forward's local port: %w", err)
	}
	if len(ports) == 0 {
		return "", fmt.Errorf("port-forward has no local port")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))))
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(dl)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil && errOut.Len() > 0 {
		err = fmt.Errorf("%w; port-forward said %s", err, strings.TrimSpace(errOut.String()))
	}
	return line, err
}

// StreamRouteCounts is apiserver_websocket_streaming_requests_total summed
// over every apiserver of the cluster, by subresource and proxy type
// ("exec/proxied_to_kubelet"); an apiserver that routed nothing yet has
// no series.
func StreamRouteCounts(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface) (map[string]float64, error) {
	endpoints, err := probes.APIServerEndpoints(ctx, cs)
	if err != nil {
		return nil, err
	}
	readers := map[string]kubernetes.Interface{}
	for _, ep := range endpoints {
		if readers[ep], err = kubernetes.NewForConfig(probes.AtAPIServer(cfg, ep)); err != nil {
			return nil, err
		}
	}
	return probes.SumRouteCounts(ctx, readers)
}
