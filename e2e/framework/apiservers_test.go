package framework

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

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

func TestEndpointHost(t *testing.T) {
	for in, want := range map[string]string{"https://172.18.0.2:6443": "172.18.0.2", "https://[fc00::2]:6443": "fc00::2", "not an endpoint": "not an endpoint"} {
		if got := EndpointHost(in); got != want {
			t.Errorf("EndpointHost(%q) = %q, want %q", in, got, want)
		}
	}
}
