package probes

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func TestAPIServerEndpointsAreTheKubernetesServices(t *testing.T) {
	slice := func(name, svc string, port int32, addrs ...string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port)}},
		}
		for _, a := range addrs {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
		}
		return s
	}
	cs := fake.NewClientset(
		slice("kubernetes", "kubernetes", 6443, "172.18.0.3", "172.18.0.2"),
		slice("other", "other", 80, "10.0.0.1"),
	)
	got, err := APIServerEndpoints(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://172.18.0.2:6443", "https://172.18.0.3:6443"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("endpoints %v, want %v", got, want)
	}
	if _, err := APIServerEndpoints(context.Background(), fake.NewClientset()); err == nil {
		t.Error("no apiserver listed must be an error")
	}
}

// metricsServer serves an apiserver's /metrics with NodeDeclaredFeatures
// in the given state.
func metricsServer(t *testing.T, ndf bool) *httptest.Server {
	t.Helper()
	v := map[bool]string{true: "1", false: "0"}[ndf]
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" && r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"gitVersion":"v1.37.2"}`))
			return
		}
		_, _ = w.Write([]byte("# TYPE kubernetes_feature_enabled gauge\nkubernetes_feature_enabled{name=\"NodeDeclaredFeatures\",stage=\"\"} " + v + "\n"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEveryAPIServerReadsEachOneWhereThereAreSeveral(t *testing.T) {
	allow := func(cs *fake.Clientset, ok bool) {
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			rev := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview)
			rev.Status.Allowed = ok
			return true, rev, nil
		})
	}
	on, off := metricsServer(t, true), metricsServer(t, false)
	slice := func(srv *httptest.Server) *discoveryv1.EndpointSlice {
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		p, _ := strconv.Atoi(port)
		return &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-" + port, Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(p))}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		}
	}
	cfg := &rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}

	cs := fake.NewClientset(slice(on), slice(off))
	allow(cs, true)
	clients, got, versions, why := everyAPIServer(context.Background(), cs, cfg)
	if len(clients) != 2 || versions["https://"+on.Listener.Addr().String()] != "v1.37.2" {
		t.Errorf("two apiservers: a client and a version for each: %v %v", clients, versions)
	}
	if why != "" || len(got) != 2 || !got["https://"+on.Listener.Addr().String()].Enabled("NodeDeclaredFeatures") || got["https://"+off.Listener.Addr().String()].Enabled("NodeDeclaredFeatures") {
		t.Errorf("two apiservers: %v, %q", got, why)
	}

	cs = fake.NewClientset(slice(on))
	allow(cs, true)
	if _, got, _, why := everyAPIServer(context.Background(), cs, cfg); got != nil || why != "" {
		t.Errorf("one apiserver is the one read through the cluster's address: %v, %q", got, why)
	}

	cs = fake.NewClientset(slice(on), slice(off))
	allow(cs, false)
	if _, got, _, why := everyAPIServer(context.Background(), cs, cfg); got != nil || !strings.Contains(why, "may not list endpointslices in default") {
		t.Errorf("without the permission: %v, %q", got, why)
	}

	off.Close()
	cs = fake.NewClientset(slice(on), slice(off))
	allow(cs, true)
	if _, got, _, why := everyAPIServer(context.Background(), cs, cfg); len(got) != 1 || !strings.Contains(why, "1 of 2 apiservers could not be read") {
		t.Errorf("one unreachable: %v, %q", got, why)
	}
}

// One address for several apiservers (a VIP every one advertises, a
// managed control plane): their identity Leases count them, and those not
// reached one by one are named by count, never passed over in silence.
// Where their static pods show each one's own address, each is read there.
func TestOneEndpointWithSeveralIdentityLeases(t *testing.T) {
	allowAll := func(cs *fake.Clientset) *fake.Clientset {
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			rev := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview)
			rev.Status.Allowed = true
			return true, rev, nil
		})
		return cs
	}
	now := metav1.NewMicroTime(time.Now())
	lease := func(host string, renewed metav1.MicroTime) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "apiserver-" + host, Namespace: "kube-system",
			Labels: map[string]string{"apiserver.kubernetes.io/identity": "kube-apiserver", "kubernetes.io/hostname": host}},
			Spec: coordinationv1.LeaseSpec{RenewTime: &renewed}}
	}
	on, off := metricsServer(t, true), metricsServer(t, false)
	vip := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(6443))}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}}, // nothing listens on 6443 here
	}
	cfg := &rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	gone := metav1.NewMicroTime(time.Now().Add(-30 * time.Minute))
	leases := []runtime.Object{vip, lease("cp-1", now), lease("cp-2", now), lease("cp-3", now), lease("cp-old", gone)}

	_, got, _, why := everyAPIServer(context.Background(), allowAll(fake.NewClientset(leases...)), cfg)
	if len(got) != 0 || !strings.Contains(why, "3 apiservers run (identity Leases of cp-1, cp-2, cp-3) and 0 could be reached one by one at the kubernetes Service's endpoints") ||
		!strings.Contains(why, "3 were not asked") {
		t.Errorf("one unreachable VIP, three apiservers: %v, %q", got, why)
	}

	staticPod := func(name string, srv *httptest.Server) *corev1.Pod {
		host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"component": "kube-apiserver"}},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-apiserver", Command: []string{"kube-apiserver", "--secure-port=" + port}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: host}}
	}
	objs := append(slices.Clone(leases), staticPod("kube-apiserver-cp-1", on), staticPod("kube-apiserver-cp-2", off))
	clients, got, _, why := everyAPIServer(context.Background(), allowAll(fake.NewClientset(objs...)), cfg)
	if len(clients) != 2 || len(got) != 2 || !strings.Contains(why, "3 apiservers run") || !strings.Contains(why, "2 could be reached one by one at their static pods' addresses") || !strings.Contains(why, "1 were not asked") {
		t.Errorf("static pods of two of three: %v, %q", got, why)
	}
}
