package surgery

import (
	"reflect"
	"strings"
	"testing"
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
