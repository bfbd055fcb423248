package probes

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
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
	if h := EndpointHost(got[0]); h != "172.18.0.2" {
		t.Errorf("host %q", h)
	}
	if _, err := APIServerEndpoints(context.Background(), fake.NewClientset()); err == nil {
		t.Error("no apiserver listed must be an error")
	}
}

// Each request dials anew, so a load balancer can send each elsewhere.
func TestOneConnectionPerRequestDialsEveryTime(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","items":[]}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	base := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	count := func(cfg *rest.Config) int32 {
		conns.Store(0)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return conns.Load()
	}
	if n := count(base); n != 1 {
		t.Fatalf("precondition: client-go reuses its connection, saw %d", n)
	}
	fresh, err := OneConnectionPerRequest(base)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(fresh); n != 3 {
		t.Errorf("3 requests made %d connections, want 3", n)
	}
}
