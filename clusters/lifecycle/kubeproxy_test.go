package lifecycle

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kind's config as it writes it with kubeProxyMode none (abridged).
const kindKubeadmConf = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.38.0-beta.0
controlPlaneEndpoint: "ndfq-next-control-plane:6443"
networking:
  podSubnet: "10.244.0.0/16"
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  bindPort: 6443
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
metadata:
  name: config
mode: "none"
conntrack:
  maxPerCore: 0
`

func TestKubeProxyPhaseConfig(t *testing.T) {
	out, err := kubeProxyPhaseConfig([]byte(kindKubeadmConf), "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "---\n")[1:]
	if len(docs) != 4 {
		t.Fatalf("%d documents, want kind's 4:\n%s", len(docs), out)
	}
	var cc, proxy map[string]any
	_ = yaml.Unmarshal([]byte(docs[0]), &cc)
	_ = yaml.Unmarshal([]byte(docs[3]), &proxy)
	if cc["kubernetesVersion"] != "v1.37.2" || cc["controlPlaneEndpoint"] != "ndfq-next-control-plane:6443" {
		t.Errorf("ClusterConfiguration %v", cc)
	}
	if proxy["mode"] != "iptables" || proxy["conntrack"].(map[string]any)["maxPerCore"] != float64(0) {
		t.Errorf("KubeProxyConfiguration %v: mode iptables, kind's conntrack kept", proxy)
	}
	if _, err := kubeProxyPhaseConfig([]byte("kind: InitConfiguration\n"), "v1.37.2"); err == nil || !strings.Contains(err.Error(), "no ClusterConfiguration") {
		t.Errorf("a config without ClusterConfiguration: %v", err)
	}
}
