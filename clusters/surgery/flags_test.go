package surgery

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ndfq/ndfq/fixtures"
)

func TestKubeletGatesFromFlagsFile(t *testing.T) {
	env := []byte(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --feature-gates=NodeDeclaredFeatures=true,RestartAllContainersOnContainerExits=false --node-ip=172.18.0.5 --node-labels=ndfq.io/pool=n-2-on"` + "\n")
	args, err := kubeletArgs(env)
	if err != nil {
		t.Fatal(err)
	}
	gates, err := gatesFromArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gates, map[string]bool{"NodeDeclaredFeatures": true, "RestartAllContainersOnContainerExits": false}) {
		t.Errorf("got %v", gates)
	}
	none, _ := gatesFromArgs([]string{"--node-ip=1.2.3.4"})
	if len(none) != 0 {
		t.Errorf("no flag means no explicit gates: %v", none)
	}
	if _, err := kubeletArgs([]byte("OTHER=1\n")); err == nil {
		t.Error("a flags file without KUBELET_KUBEADM_ARGS must be an error")
	}
}

func TestParseGatesRefusesMalformed(t *testing.T) {
	if _, err := ParseGates("A=true,B"); err == nil || !strings.Contains(err.Error(), `"B" is not Name=true|false`) {
		t.Errorf("got %v", err)
	}
	if g, err := ParseGates(""); err != nil || len(g) != 0 {
		t.Errorf("empty: %v %v", g, err)
	}
}

func TestSetGatesFlagKeepsOtherFlags(t *testing.T) {
	env := []byte(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --feature-gates=NodeDeclaredFeatures=true --node-ip=172.18.0.5"` + "\n")
	out, err := setGatesFlag(env, map[string]bool{"RestartAllContainersOnContainerExits": false, "NodeDeclaredFeatures": false})
	if err != nil {
		t.Fatal(err)
	}
	args, err := kubeletArgs(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--container-runtime-endpoint=unix:///run/containerd/containerd.sock", "--node-ip=172.18.0.5", "--feature-gates=NodeDeclaredFeatures=false,RestartAllContainersOnContainerExits=false"}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("got %v", args)
	}
	out, _ = setGatesFlag(env, nil)
	if strings.Contains(string(out), "--feature-gates") || !strings.HasSuffix(string(out), "\n") {
		t.Errorf("no gates means no flag, file shape kept: %q", out)
	}
}

func TestSetManifestGates(t *testing.T) {
	manifest := []byte(`apiVersion: v1
kind: Pod
metadata:
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - name: kube-scheduler
    image: registry.k8s.io/kube-scheduler:v1.35.4
    command:
    - kube-scheduler
    - --bind-address=0.0.0.0
    - --feature-gates=NodeDeclaredFeatures=false
`)
	out, prev, err := setManifestFlags(manifest, "kube-scheduler", map[string]bool{"NodeDeclaredFeatures": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(prev, map[string]bool{"NodeDeclaredFeatures": false}) {
		t.Errorf("previous %v", prev)
	}
	s := string(out)
	if !strings.Contains(s, "- --feature-gates=NodeDeclaredFeatures=true") || !strings.Contains(s, "- --bind-address=0.0.0.0") || strings.Contains(s, "=false") {
		t.Errorf("got\n%s", s)
	}
	if _, _, err := setManifestFlags(manifest, "kube-apiserver", nil, nil); err == nil {
		t.Error("a manifest without the component's container must be an error")
	}
	// A 1.37 rollback: emulated-version set in the same write; "" takes it out again.
	out, _, err = setManifestFlags(manifest, "kube-scheduler", map[string]bool{"NodeDeclaredFeatures": false}, map[string]string{"emulated-version": "1.36"})
	if err != nil || !strings.Contains(string(out), "- --emulated-version=1.36") || !strings.Contains(string(out), "- --bind-address=0.0.0.0") {
		t.Fatalf("got %v\n%s", err, out)
	}
	out, _, err = setManifestFlags(out, "kube-scheduler", nil, map[string]string{"emulated-version": ""})
	if err != nil || strings.Contains(string(out), "emulated-version") || strings.Contains(string(out), "feature-gates") {
		t.Errorf("got %v\n%s", err, out)
	}
}

// crictl info of containerd 1.6 (no features, no handlers) and of
// containerd 2.x (features, a default and a named handler).
func TestParseCRIInfo(t *testing.T) {
	old := `{"status":{"conditions":[]},"config":{}}`
	v2 := `{"status":{},"features":{"supplemental_groups_policy":true,"user_namespaces_host_network":true},
	  "runtimeHandlers":[{"features":{"recursive_read_only_mounts":true,"user_namespaces":true}},{"name":"runc","features":{"user_namespaces":true}},{"name":"test-handler","features":{}}]}`
	for in, want := range map[string]fixtures.Runtime{old: {}, v2: {UserNamespacesHostNetwork: true, UserNamespaces: true}} {
		got, err := parseCRIInfo([]byte(in))
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
	if _, err := parseCRIInfo([]byte("FATA[0000] connect: connection refused")); err == nil {
		t.Error("a crictl error is not a report")
	}
}
