package probes

import (
	"testing"

	"github.com/ndfq/ndfq/fixtures"
)

const routesExposition = `# HELP apiserver_websocket_streaming_requests_total [ALPHA] Total number of WebSocket streaming requests
# TYPE apiserver_websocket_streaming_requests_total counter
apiserver_websocket_streaming_requests_total{proxy_type="proxied_to_kubelet",subresource="exec"} 3
apiserver_websocket_streaming_requests_total{proxy_type="translated_at_apiserver",subresource="exec"} 2
apiserver_websocket_streaming_requests_total{proxy_type="translated_at_apiserver",subresource="portforward"} 1
# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",verb="GET"} 10
`

func TestRouteCountsSumOverAPIServers(t *testing.T) {
	counts := map[string]float64{}
	for range 2 {
		if err := addRouteCounts(counts, []byte(routesExposition)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{"exec/proxied_to_kubelet": 6, "exec/translated_at_apiserver": 4, "portforward/translated_at_apiserver": 2}
	if len(counts) != len(want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s = %v, want %v", k, counts[k], v)
		}
	}
	if err := addRouteCounts(counts, []byte("nothing of it\n")); err != nil {
		t.Errorf("an apiserver that routed nothing yet: %v", err)
	}
}

func TestRouteBetween(t *testing.T) {
	before := map[string]float64{"exec/translated_at_apiserver": 1}
	after := map[string]float64{"exec/translated_at_apiserver": 1, "exec/proxied_to_kubelet": 1, "attach/proxied_to_kubelet": 1, "attach/translated_at_apiserver": 1}
	for op, want := range map[fixtures.StreamOp]string{
		fixtures.StreamExec:        fixtures.ProxiedToKubelet,
		fixtures.StreamAttach:      "proxied_to_kubelet+translated_at_apiserver",
		fixtures.StreamPortForward: "",
	} {
		if got := RouteBetween(before, after, op); got != want {
			t.Errorf("%s: %q, want %q", op, got, want)
		}
	}
}
