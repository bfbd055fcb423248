package framework

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ndfq/ndfq/internal/wait"
)

// ExporterReading is one scrape of the real `ndfq exporter` binary.
type ExporterReading struct {
	Series  int   // ndfq_* samples
	RSS     int64 // process_resident_memory_bytes
	HeapUse int64 // go_memstats_heap_inuse_bytes
}

// ScrapeExporter runs `ndfq exporter` against kubeconfig (gate reads off:
// simulated kubelets have no endpoint), waits (wait-metrics) until its
// caches are synced and it serves, scrapes it once and stops it.
func ScrapeExporter(ctx context.Context, kubeconfig string) ExporterReading {
	GinkgoHelper()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := ln.Addr().String()
	Expect(ln.Close()).To(Succeed())
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(cctx, ndfqBin(), "exporter", "--kubeconfig", kubeconfig, "--listen", addr, "--gate-interval", "0")
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	defer func() { cancel(); _ = cmd.Wait() }()
	var body string
	Expect(wait.Until(ctx, wait.Metrics, "ndfq exporter to serve on "+addr, func(ctx context.Context) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			return false, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		body = string(raw)
		return err == nil && resp.StatusCode == http.StatusOK, fmt.Sprint(resp.StatusCode, err), nil
	})).To(Succeed())
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	var r ExporterReading
	for name, f := range families {
		if strings.HasPrefix(name, "ndfq_") {
			r.Series += len(f.GetMetric())
		}
	}
	if f := families["process_resident_memory_bytes"]; f != nil && len(f.GetMetric()) > 0 {
		r.RSS = int64(f.GetMetric()[0].GetGauge().GetValue())
	}
	if f := families["go_memstats_heap_inuse_bytes"]; f != nil && len(f.GetMetric()) > 0 {
		r.HeapUse = int64(f.GetMetric()[0].GetGauge().GetValue())
	}
	return r
}
