package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	kindconstants "sigs.k8s.io/kind/pkg/cluster/constants"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/internal/wait"
)

// The suite's Prometheus and ndfq's exporter, from the manifests operators
// get: config/prometheus/e2e-prometheus.yaml and config/exporter/exporter.yaml.
const (
	PrometheusNamespace = "ndfq-monitoring"
	prometheusService   = "prometheus:9090"
	exporterNamespace   = "ndfq-system"
	rulesFile           = "config/prometheus/ndfq.rules.yaml"
)

// Prometheus queries the suite's Prometheus through the apiserver's
// service proxy: no port-forward, no address on the host.
type Prometheus struct{ API promv1.API }

// StartPrometheus builds (cached) and loads the Prometheus image and
// ndfq's own into the control-plane nodes, runs both there with the
// shipped rules, and waits (wait-metrics) until every apiserver, the
// schedulers, every kubelet and the exporter are scraped. Objects left by
// an earlier run on a kept cluster are replaced.
func (e *Env) StartPrometheus(ctx context.Context) (*Prometheus, error) {
	b := &nodeimage.Builder{Cache: nodeimage.Cache{Dir: e.Settings.CacheDir}, Log: e.Log}
	archive, err := b.PrometheusImage(ctx)
	if err != nil {
		return nil, err
	}
	var loads errgroup.Group
	for _, a := range []string{archive, ProbeImageArchive()} {
		loads.Go(func() error { return e.Cluster.LoadImageArchive(a, kindconstants.ControlPlaneNodeRoleValue) })
	}
	if err := loads.Wait(); err != nil {
		return nil, err
	}
	exporterImage, err := probeImageRef(ctx)
	if err != nil {
		return nil, err
	}
	rules, err := os.ReadFile(filepath.Join("..", rulesFile))
	if err != nil {
		return nil, err
	}
	if err := e.applyReplacing(ctx, filepath.Join("..", "config", "exporter", "exporter.yaml"), func(obj k8s.Object) {
		if d, ok := obj.(*appsv1.Deployment); ok {
			d.Spec.Template.Spec.Containers[0].Image = exporterImage
			onControlPlane(&d.Spec.Template.Spec)
		}
	}); err != nil {
		return nil, err
	}
	// The shipped rules, as shipped, before the Prometheus that loads them.
	if err := putConfigMap(ctx, e.Clientset, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-rules", Namespace: PrometheusNamespace},
		Data: map[string]string{"ndfq.rules.yaml": string(rules)}}); err != nil {
		return nil, err
	}
	if err := e.applyReplacing(ctx, filepath.Join("..", "config", "prometheus", "e2e-prometheus.yaml"), func(obj k8s.Object) {
		if d, ok := obj.(*appsv1.Deployment); ok {
			d.Spec.Template.Spec.Containers[0].Image = nodeimage.PrometheusImageTag
		}
	}); err != nil {
		return nil, err
	}
	p, err := newPrometheus(e.Cluster.Client.RESTConfig())
	if err != nil {
		return nil, err
	}
	apiservers := e.Topology.ControlPlaneCount()
	want := map[string]int{"kube-apiserver": apiservers, "kube-scheduler": apiservers, "kubelet": e.Topology.NodeCount(), "ndfq-exporter": 1}
	if n := len(e.Topology.ControlPlane.ExtraSchedulers); n > 0 {
		want[ExtraSchedulerJob] = n
	}
	e.Log.Printf("prometheus: waiting until it scrapes %v", want)
	err = wait.Until(ctx, wait.Metrics, "prometheus to scrape every target", func(ctx context.Context) (bool, string, error) {
		v, err := p.Vector(ctx, `count by (job) (up == 1)`, time.Now())
		if err != nil {
			return false, err.Error(), nil
		}
		got := map[string]int{}
		for _, s := range v {
			got[string(s.Metric["job"])] = int(s.Value)
		}
		for job, n := range want {
			if got[job] < n {
				return false, fmt.Sprintf("up: %v", got), nil
			}
		}
		return true, "", nil
	})
	return p, err
}

// onControlPlane pins a pod to the control-plane nodes, through any taint.
func onControlPlane(s *corev1.PodSpec) {
	s.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
	s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// applyReplacing creates every object of a manifest, first deleting one
// of the same name an earlier run left; edit may change objects first.
func (e *Env) applyReplacing(ctx context.Context, path string, edit func(k8s.Object)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := e.Cluster.Client.Resources()
	return decoder.DecodeEach(ctx, f, func(ctx context.Context, obj k8s.Object) error {
		edit(obj)
		err := r.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) && obj.GetObjectKind().GroupVersionKind().Kind != "Namespace" {
			if err = r.Delete(ctx, obj); err == nil {
				obj.SetResourceVersion("")
				err = wait.Until(ctx, wait.PodsGone, "old "+obj.GetName()+" gone", func(ctx context.Context) (bool, string, error) {
					err := r.Create(ctx, obj)
					return !apierrors.IsAlreadyExists(err), fmt.Sprint(err), ignoreExists(err)
				})
			}
		} else if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", path, obj.GetNamespace(), obj.GetName(), err)
		}
		return nil
	})
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func newPrometheus(cfg *rest.Config) (*Prometheus, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	c, err := api.NewClient(api.Config{
		Address:      strings.TrimRight(cfg.Host, "/") + "/api/v1/namespaces/" + PrometheusNamespace + "/services/" + prometheusService + "/proxy",
		RoundTripper: rt,
	})
	if err != nil {
		return nil, err
	}
	return &Prometheus{API: promv1.NewAPI(c)}, nil
}

// Vector is an instant query's answer at t.
func (p *Prometheus) Vector(ctx context.Context, query string, t time.Time) (model.Vector, error) {
	v, _, _, err := p.API.Query(ctx, query, t)
	if err != nil {
		return nil, fmt.Errorf("prometheus %q: %w", query, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("prometheus %q: a %s, not a vector", query, v.Type())
	}
	return vec, nil
}

// Sum is the sum of a query's samples at t; 0 where it has none (a
// labelled counter exists only from its first increment).
func (p *Prometheus) Sum(ctx context.Context, query string, t time.Time) (float64, error) {
	v, err := p.Vector(ctx, query, t)
	sum := 0.0
	for _, s := range v {
		sum += float64(s.Value)
	}
	return sum, err
}

// SumByInstance is a series summed per scrape instance (host:port) at t.
func (p *Prometheus) SumByInstance(ctx context.Context, series string, t time.Time) (map[string]float64, error) {
	v, err := p.Vector(ctx, "sum by (instance) ("+series+")", t)
	out := map[string]float64{}
	for _, s := range v {
		out[string(s.Metric["instance"])] = float64(s.Value)
	}
	return out, err
}

// WaitScrapedAfter waits (wait-metrics) until every target's last scrape
// is later than t: what happened before t is in the series.
func (p *Prometheus) WaitScrapedAfter(ctx context.Context, t time.Time) error {
	return wait.Until(ctx, wait.Metrics, "every target scraped after "+t.Format(time.TimeOnly), func(ctx context.Context) (bool, string, error) {
		v, err := p.Vector(ctx, `min(timestamp(up))`, time.Now())
		if err != nil || len(v) == 0 {
			return false, fmt.Sprint("no scrapes yet ", err), nil
		}
		last := v[0].Value
		return float64(last) > float64(t.UnixNano())/1e9, fmt.Sprintf("oldest last scrape at %.0f", float64(last)), nil
	})
}

// PrometheusUp is the suite's Prometheus: the pass's when it answers,
// else started now (a topology whose pass planned no signals cell).
func (e *Env) PrometheusUp(ctx context.Context) (*Prometheus, error) {
	p, err := newPrometheus(e.Cluster.Client.RESTConfig())
	if err != nil {
		return nil, err
	}
	if _, err := p.Vector(ctx, `up`, time.Now()); err == nil {
		return p, nil
	}
	return e.StartPrometheus(ctx)
}

// ExtraSchedulerJob is the e2e Prometheus's job of the extra schedulers;
// its label "scheduler" names each.
const ExtraSchedulerJob = "ndfq-extra-scheduler"

// firingQuery selects every firing instance of a shipped alert.
func firingQuery(alert string) string {
	return fmt.Sprintf(`ALERTS{alertname=%q,alertstate="firing"}`, alert)
}

// FiringFor is the label "pool" of every firing instance of alert now.
func (p *Prometheus) FiringFor(ctx context.Context, alert string) ([]string, error) {
	v, err := p.Vector(ctx, firingQuery(alert), time.Now())
	if err != nil {
		return nil, err
	}
	var pools []string
	for _, s := range v {
		pools = append(pools, string(s.Metric["pool"]))
	}
	slices.Sort(pools)
	return pools, nil
}

// WaitFiring waits (wait-alert-fires) until alert fires for every one of
// pools (none: fires at all), and returns the pools it fires for.
func (p *Prometheus) WaitFiring(ctx context.Context, alert string, pools []string) ([]string, error) {
	var fired []string
	err := wait.Until(ctx, wait.AlertFires, alert+" to fire for "+strings.Join(pools, ", "), func(ctx context.Context) (bool, string, error) {
		f, err := p.FiringFor(ctx, alert)
		if err != nil {
			return false, err.Error(), nil
		}
		fired = f
		if len(f) == 0 {
			return false, "not firing", nil
		}
		for _, pool := range pools {
			if !slices.Contains(f, pool) {
				return false, fmt.Sprintf("firing for %v", f), nil
			}
		}
		return true, "", nil
	})
	return fired, err
}

// WaitAtLeast waits (wait-metrics) until query's sum is at least want, and
// returns the last sum read.
func (p *Prometheus) WaitAtLeast(ctx context.Context, query string, want float64) (float64, error) {
	var got float64
	err := wait.Until(ctx, wait.Metrics, fmt.Sprintf("%s to reach %g", query, want), func(ctx context.Context) (bool, string, error) {
		v, err := p.Sum(ctx, query, time.Now())
		if err != nil {
			return false, err.Error(), nil
		}
		got = v
		return v >= want, fmt.Sprintf("%g", v), nil
	})
	return got, err
}
