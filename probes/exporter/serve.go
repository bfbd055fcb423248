package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/ndfq/ndfq/probes"
)

// Options are the exporter's settings.
type Options struct {
	Listen    string        // address of /metrics and /healthz
	PoolLabel string        // "" picks a well-known pool label
	GateEvery time.Duration // 0: no gate fingerprints
	Resync    time.Duration
}

// Registry is a registry with the collector and the process's own
// collectors (its memory is what `make bench` reads).
func Registry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Serve runs the exporter until ctx ends; ready, when not nil, is called
// with the listening address once the caches are synced.
func Serve(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, o Options, ready func(addr string)) error {
	all := informers.NewSharedInformerFactory(cs, o.Resync)
	lease := informers.NewSharedInformerFactoryWithOptions(cs, o.Resync, informers.WithNamespace(corev1.NamespaceNodeLease))
	probe := informers.NewSharedInformerFactoryWithOptions(cs, o.Resync, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = probes.RunLabel
	}))
	c := &Collector{
		Nodes:     all.Core().V1().Nodes().Lister(),
		Leases:    lease.Coordination().V1().Leases().Lister().Leases(corev1.NamespaceNodeLease),
		ProbePods: probe.Core().V1().Pods().Lister(),
		PoolLabel: o.PoolLabel,
		Now:       time.Now,
	}
	for _, f := range []informers.SharedInformerFactory{all, lease, probe} {
		f.Start(ctx.Done())
	}
	for what, ok := range map[string]bool{
		"nodes":      cache.WaitForCacheSync(ctx.Done(), all.Core().V1().Nodes().Informer().HasSynced),
		"leases":     cache.WaitForCacheSync(ctx.Done(), lease.Coordination().V1().Leases().Informer().HasSynced),
		"probe pods": cache.WaitForCacheSync(ctx.Done(), probe.Core().V1().Pods().Informer().HasSynced),
	} {
		if !ok {
			return fmt.Errorf("exporter: the %s cache did not sync: %w", what, context.Cause(ctx))
		}
	}
	if o.GateEvery > 0 {
		c.Gates = &GateReader{Clientset: cs, Config: cfg, Nodes: c.Nodes, PoolLabel: o.PoolLabel, Every: o.GateEvery}
		go c.Gates.Run(ctx)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry(c), promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("exporter: --listen %s: %w", o.Listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr().String())
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
