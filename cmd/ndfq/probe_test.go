package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ndfq/ndfq/clusters/topology"
)

// blackhole is an address that accepts connections and never answers, as
// an apiserver behind a dead load balancer does; its kubeconfig points there.
func blackhole(t *testing.T) (kubeconfig string) {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never answered, never closed until the test ends
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		for _, c := range held {
			_ = c.Close()
		}
	})
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, l.Addr())
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// An interrupt while connecting stops the probe at once, whatever
// --request-timeout says (0: none), and says why.
func TestProbeInterruptedWhileConnecting(t *testing.T) {
	kc := blackhole(t)
	for _, reqTimeout := range []string{"30s", "0"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(300*time.Millisecond, func() { cancel(errInterrupted("SIGINT")) })
		var out, errOut bytes.Buffer
		start := time.Now()
		code := run(ctx, []string{"probe", "--kubeconfig", kc, "--request-timeout", reqTimeout}, &out, &errOut)
		took := time.Since(start)
		if code != exitError || took > 2*time.Second || !strings.Contains(errOut.String(), "interrupted by SIGINT") {
			t.Errorf("--request-timeout %s: exit %d after %s, want %d within 2s naming the interrupt; said:\n%s%s", reqTimeout, code, took, exitError, out.String(), errOut.String())
		}
	}
}

// --timeout bounds the whole run, and names itself when it ends it.
func TestProbeTimeout(t *testing.T) {
	kc := blackhole(t)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"probe", "--kubeconfig", kc, "--timeout", "300ms"}, &out, &errOut)
	if took := time.Since(start); code != exitError || took > 2*time.Second || !strings.Contains(errOut.String(), "--timeout 300ms") {
		t.Errorf("exit %d after %s, want %d within 2s naming --timeout; said:\n%s%s", code, took, exitError, out.String(), errOut.String())
	}
}

// Output paths are checked before anything connects: a run is not thrown
// away at its end for a file it cannot write.
func TestProbeOutputPathsCheckedFirst(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir", "out")
	dir := t.TempDir()
	for _, flag := range []string{"--json", "--junit", "--svg"} {
		for _, path := range []string{missing, dir} {
			var out, errOut bytes.Buffer
			// No kubeconfig at all: a flag error must come first.
			code := run(context.Background(), []string{"probe", "--kubeconfig", filepath.Join(dir, "none"), flag, path}, &out, &errOut)
			if code != exitError || !strings.Contains(errOut.String(), flag+" "+path) || strings.Contains(errOut.String(), "kubeconfig") {
				t.Errorf("%s %s: exit %d; said:\n%s", flag, path, code, errOut.String())
			}
		}
	}
}

// fakeAPIServer answers ConfigMap writes (kept in order) and fails every
// other request with 500, as a control plane failing mid-run does.
func fakeAPIServer(t *testing.T) (kubeconfig string, writes func() []corev1.ConfigMap) {
	t.Helper()
	var mu sync.Mutex
	var got []corev1.ConfigMap
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/configmaps") && (r.Method == http.MethodPost || r.Method == http.MethodPut) {
			body, _ := io.ReadAll(r.Body)
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil) // JSON or protobuf, as client-go sends it
			cm, ok := obj.(*corev1.ConfigMap)
			if err != nil || !ok {
				t.Errorf("a ConfigMap write that is not one: %v", err)
				return
			}
			mu.Lock()
			got = append(got, *cm)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(cm)
			return
		}
		http.Error(w, "control plane down", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, func() []corev1.ConfigMap { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
}

// The Job's results ConfigMap says RUNNING with the run's id, pod and Job
// before anything is probed, then the error of that same run: never an
// older run's verdict.
func TestResultsConfigMapIsThisRunsFromTheStart(t *testing.T) {
	kc, writes := fakeAPIServer(t)
	t.Setenv("POD_NAME", "ndfq-probe-x7k2p")
	t.Setenv("JOB_UID", "0b6d2f4e-uid")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"probe", "--kubeconfig", kc, "-n", "ndfq-probe", "--results-configmap", "ndfq-probe-results"}, &out, &errOut)
	got := writes()
	if code != exitError || len(got) != 2 {
		t.Fatalf("exit %d, %d writes, want %d and 2 (RUNNING, ERROR); said:\n%s", code, len(got), exitError, errOut.String())
	}
	running, failed := got[0].Data, got[1].Data
	if running["verdict"] != "RUNNING" || running["runID"] == "" || running["pod"] != "ndfq-probe-x7k2p" || running["jobUID"] != "0b6d2f4e-uid" {
		t.Errorf("first write: %v", running)
	}
	if failed["verdict"] != "ERROR" || failed["runID"] != running["runID"] || !strings.Contains(failed["error"], "control plane down") || failed["report.json"] != "" {
		t.Errorf("second write: %v (first %v)", failed, running)
	}
}

// Every shipped topology's fleet intent is valid and holds the same plan
// as the topology read directly (one path for both).
func TestEveryTopologyIsAFleetIntent(t *testing.T) {
	for _, name := range topology.Names() {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"intent", "from-topology", name}, &out, &errOut); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut.String())
		}
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fromFile, err := loadIntent(path, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		direct, err := loadIntent(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromFile, direct) {
			t.Errorf("%s: the file's plan differs from the topology's:\n%+v\n%+v", name, *fromFile.ControlPlane, *direct.ControlPlane)
		}
	}
}
