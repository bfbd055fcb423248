package probes

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

const kubeletMetrics = `# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="NodeDeclaredFeatures",stage=""} 1
kubernetes_feature_enabled{name="RestartAllContainersOnContainerExits",stage="BETA"} 0
kubernetes_feature_enabled{name="InPlacePodVerticalScalingMemoryBackedVolumes",stage="ALPHA"} 0
# HELP other_metric x
# TYPE other_metric counter
other_metric 3
`

func TestGatesFromMetrics(t *testing.T) {
	g, err := GatesFromMetrics(strings.NewReader(kubeletMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Enabled("NodeDeclaredFeatures") || g.Describe("NodeDeclaredFeatures") != "on (GA)" {
		t.Errorf("NDF: %s", g.Describe("NodeDeclaredFeatures"))
	}
	if g.Enabled("RestartAllContainersOnContainerExits") || !g.Known("RestartAllContainersOnContainerExits") || g.Describe("RestartAllContainersOnContainerExits") != "off (BETA)" {
		t.Errorf("RACOCE: %s", g.Describe("RestartAllContainersOnContainerExits"))
	}
	if g.Known("Nope") || g.Describe("Nope") != "unknown to this component" {
		t.Error("absent gate")
	}
	if len(g.Names()) != 3 {
		t.Errorf("names %v", g.Names())
	}
}

func TestGatesFromMetricsWithoutTheMetric(t *testing.T) {
	if _, err := GatesFromMetrics(strings.NewReader("other_metric 1\n")); err == nil || !strings.Contains(err.Error(), "no kubernetes_feature_enabled") {
		t.Fatalf("got %v", err)
	}
}

// --scheduler-metrics-url's gates are the scheduler's only where the
// endpoint is a kube-scheduler and the leader; otherwise unchecked, named.
func TestLeadingSchedulerGates(t *testing.T) {
	const gates = "kubernetes_feature_enabled{name=\"NodeDeclaredFeatures\",stage=\"\"} 1\n"
	const sched = "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 4\n"
	cases := map[string]struct{ body, unchecked string }{
		"an apiserver":                        {gates + "apiserver_request_total{code=\"200\"} 9\n", "it is not a kube-scheduler's /metrics"},
		"a scheduler that placed nothing yet": {gates + "scheduler_pending_pods{queue=\"active\"} 0\n", ""},
		"a standby scheduler":                 {gates + sched + "leader_election_master_status{name=\"kube-scheduler\"} 0\n", "does not hold the kube-scheduler Lease"},
		"no leader election, no Lease":        {gates + sched, ""},
		"the leading scheduler":               {gates + sched + "leader_election_master_status{name=\"kube-scheduler\"} 1\n", ""},
		"unreachable (HTTP 403)":              {"", "HTTP 403"},
		"another component leads":             {gates + sched + "leader_election_master_status{name=\"kube-controller-manager\"} 1\n", ""},
	}
	// Without leader election where a Lease says another scheduler leads.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(gates + sched)) }))
	defer srv.Close()
	held := fake.NewClientset(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("cp-2_0b6d")}})
	if g, unchecked := LeadingSchedulerGates(context.Background(), held, &rest.Config{}, srv.URL+"/metrics"); g != nil || !strings.Contains(unchecked, "held by cp-2_0b6d") {
		t.Errorf("a Lease held elsewhere: gates %v, unchecked %q", g, unchecked)
	}
	for name, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if c.body == "" {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			_, _ = w.Write([]byte(c.body))
		}))
		g, unchecked := LeadingSchedulerGates(context.Background(), fake.NewClientset(), &rest.Config{}, srv.URL+"/metrics")
		srv.Close()
		switch {
		case c.unchecked == "" && (unchecked != "" || !g.Enabled("NodeDeclaredFeatures")):
			t.Errorf("%s: taken as %v, unchecked %q", name, g, unchecked)
		case c.unchecked != "" && (g != nil || !strings.Contains(unchecked, c.unchecked)):
			t.Errorf("%s: gates %v, unchecked %q, want it to say %q", name, g, unchecked, c.unchecked)
		}
	}
}

// Without a URL the default scheduler is found at its static pod's own
// address (component=kube-scheduler, its --secure-port) and taken only
// as the leader; a managed control plane shows none, which is said.
func TestDiscoveredSchedulerGates(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("kubernetes_feature_enabled{name=\"NodeDeclaredFeatures\",stage=\"\"} 1\nscheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 1\n"))
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-cp", Namespace: "kube-system", Labels: map[string]string{"component": "kube-scheduler"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-scheduler", Command: []string{"kube-scheduler", "--secure-port=" + port}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: host}}
	g, url, why := DiscoveredSchedulerGates(context.Background(), fake.NewClientset(pod), &rest.Config{})
	if why != "" || !g.Enabled("NodeDeclaredFeatures") || url != "https://"+srv.Listener.Addr().String()+"/metrics" {
		t.Errorf("the static pod's address: %v %q %q", g, url, why)
	}
	if g, _, why := DiscoveredSchedulerGates(context.Background(), fake.NewClientset(), &rest.Config{}); g != nil || !strings.Contains(why, "no running kube-scheduler pod is visible") {
		t.Errorf("a managed control plane: %v %q", g, why)
	}
}
