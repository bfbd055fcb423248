package probes

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/fixtures"
)

// websocketRoutes is the metric in which an apiserver (1.36+) records how
// it routed each WebSocket stream.
const websocketRoutes = "apiserver_websocket_streaming_requests_total"

// SumRouteCounts sums the route counters of the apiservers read, by where
// each is read.
func SumRouteCounts(ctx context.Context, readers map[string]kubernetes.Interface) (map[string]float64, error) {
	counts := map[string]float64{}
	for at, c := range readers {
		raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("kube-apiserver %s /metrics: %w", at, err)
		}
		if err := addRouteCounts(counts, raw); err != nil {
			return nil, fmt.Errorf("kube-apiserver %s: %w", at, err)
		}
	}
	return counts, nil
}

// addRouteCounts adds one exposition's route counters to counts. Only the
// family's own lines are parsed: an apiserver's /metrics is megabytes.
func addRouteCounts(counts map[string]float64, raw []byte) error {
	var fam bytes.Buffer
	for line := range bytes.Lines(raw) {
		if bytes.Contains(line, []byte(websocketRoutes)) {
			fam.Write(line)
		}
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(&fam)
	if err != nil {
		return fmt.Errorf("parse %s: %w", websocketRoutes, err)
	}
	for _, m := range families[websocketRoutes].GetMetric() {
		var sub, typ string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "subresource":
				sub = l.GetValue()
			case "proxy_type":
				typ = l.GetValue()
			}
		}
		counts[sub+"/"+typ] += m.GetCounter().GetValue()
	}
	return nil
}

// RouteBetween is how the apiserver routed op between two counts: the one
// proxy type whose count grew, "" where none did, and every one that grew
// where several did (another client streamed meanwhile).
func RouteBetween(before, after map[string]float64, op fixtures.StreamOp) string {
	var grew []string
	for _, typ := range []string{fixtures.ProxiedToKubelet, fixtures.TranslatedAtAPIServer} {
		k := op.Subresource() + "/" + typ
		if after[k] > before[k] {
			grew = append(grew, typ)
		}
	}
	return strings.Join(grew, "+")
}
