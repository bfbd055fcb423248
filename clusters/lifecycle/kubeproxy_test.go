package lifecycle

import (
	"os"
	"os/exec"
	"path/filepath"
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
`

func TestKubeProxyPhaseConfig(t *testing.T) {
	out, err := kubeProxyPhaseConfig([]byte(kindKubeadmConf), "v1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "---\n")[1:]
	if len(docs) != 4 {
		t.Fatalf("%d documents, want kind's 3 and kube-proxy's:\n%s", len(docs), out)
	}
	var cc, proxy map[string]any
	_ = yaml.Unmarshal([]byte(docs[0]), &cc)
	_ = yaml.Unmarshal([]byte(docs[3]), &proxy)
	if cc["kubernetesVersion"] != "v1.37.2" || cc["controlPlaneEndpoint"] != "ndfq-next-control-plane:6443" {
		t.Errorf("ClusterConfiguration %v", cc)
	}
	if proxy["kind"] != "KubeProxyConfiguration" || proxy["mode"] != "iptables" || proxy["conntrack"].(map[string]any)["maxPerCore"] != float64(0) {
		t.Errorf("KubeProxyConfiguration %v: kind's own settings", proxy)
	}
	if _, err := kubeProxyPhaseConfig([]byte("kind: InitConfiguration\n"), "v1.37.2"); err == nil || !strings.Contains(err.Error(), "no ClusterConfiguration") {
		t.Errorf("a config without ClusterConfiguration: %v", err)
	}
}

// What kind writes when it runs kube-proxy is what ndfq writes for it.
func TestKubeProxyConfigIsKinds(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kind").Output()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "pkg/cluster/internal/kubeadm/config.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The last template (the newest kubeadm API) ends with kind's KubeProxyConfiguration.
	const head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1"
	tmpl := string(src)[strings.LastIndex(string(src), head):]
	ours, _ := yaml.Marshal(kindKubeProxyConfig)
	for _, c := range []struct{ kinds, ours string }{
		{head, head}, {"minSyncPeriod: 1s", "minSyncPeriod: 1s"}, {"maxPerCore: 0", "maxPerCore: 0"},
		{`mode: "{{ .KubeProxyMode }}"`, "mode: iptables"},
	} {
		if !strings.Contains(tmpl, c.kinds) {
			t.Errorf("kind's KubeProxyConfiguration template no longer has %q:\n%s", c.kinds, tmpl)
		}
		if !strings.Contains(string(ours), c.ours) {
			t.Errorf("ndfq's KubeProxyConfiguration lacks %q:\n%s", c.ours, ours)
		}
	}
}
