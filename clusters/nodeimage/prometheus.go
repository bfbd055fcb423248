package nodeimage

import (
	"context"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Prometheus is the release the e2e cluster's Prometheus is built from,
// the same as promtool's (the Makefile's PROMETHEUS_VERSION). Built
// without the builtinassets tag: the API and the rule engine, no web UI.
var Prometheus = GoProgram{Module: "github.com/prometheus/prometheus", Version: "v0.316.0", Package: "github.com/prometheus/prometheus/cmd/prometheus"}

// PrometheusImageTag is the Prometheus image ndfq builds and loads into a cluster.
var PrometheusImageTag = "ndfq.local/prometheus:" + Prometheus.Version

// PrometheusImage builds (or reuses) an image archive of Prometheus,
// run as `/bin/prometheus --config.file=...` with its data in /prometheus.
func (b *Builder) PrometheusImage(ctx context.Context) (string, error) {
	bins, err := b.BuildPrograms(ctx, []GoProgram{Prometheus})
	if err != nil {
		return "", err
	}
	bin := bins["prometheus"]
	return b.archive(PrometheusImageTag, Key("prometheus-image", PrometheusImageTag, binaryKey(bin)), func() (imageSpec, error) {
		l, err := layerFromFiles([]fileEntry{{Path: "/bin/prometheus", Src: bin, Mode: 0o755}})
		if err != nil {
			return imageSpec{}, err
		}
		return imageSpec{Tags: []string{PrometheusImageTag}, Layers: []v1.Layer{l}, Entrypoint: []string{"/bin/prometheus"}}, nil
	})
}
