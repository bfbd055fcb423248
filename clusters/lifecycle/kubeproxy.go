package lifecycle

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/wait"
)

// kindKubeadmConfig is where kind leaves the kubeadm config it ran.
const kindKubeadmConfig = "/kind/kubeadm.conf"

// kubeProxyConfig is the config ndfq's kube-proxy addon phase runs with.
const kubeProxyConfig = "/kind/ndfq-kube-proxy.conf"

// deployKubeProxy runs, on the first control-plane node, the kube-proxy
// addon phase that kind skipped (kubeProxyMode none), with the kubeadm of
// version v: kind's own kubeadm config, told that version and kube-proxy's
// iptables mode. It waits (wait-pod-running) until kube-proxy is available
// on every node.
func (c *Cluster) deployKubeProxy(ctx context.Context, v kubeversion.Version) error {
	cp, err := c.KindNode(kindconfig.NodeName(c.Name, "control-plane", 0))
	if err != nil {
		return err
	}
	kindCfg, err := surgery.ReadFile(cp, kindKubeadmConfig)
	if err != nil {
		return err
	}
	cfg, err := kubeProxyPhaseConfig(kindCfg, v)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", kindKubeadmConfig, cp, err)
	}
	if err := surgery.WriteFile(cp, kubeProxyConfig, cfg); err != nil {
		return err
	}
	kubeadm := path.Join(nodeimage.OtherKubeadmsDir, string(v), "kubeadm")
	var out bytes.Buffer
	if err := cp.CommandContext(ctx, kubeadm, "init", "phase", "addon", "kube-proxy",
		"--config", kubeProxyConfig, "--kubeconfig", "/etc/kubernetes/admin.conf").SetStdout(&out).SetStderr(&out).Run(); err != nil {
		return fmt.Errorf("kubeadm %s init phase addon kube-proxy: %w: %s", v, err, out.String())
	}
	want := c.NodeCount()
	return wait.Until(ctx, wait.PodRunning, fmt.Sprintf("kube-proxy %s available on %d nodes", v, want), func(ctx context.Context) (bool, string, error) {
		var ds appsv1.DaemonSet
		if err := c.Client.Resources("kube-system").Get(ctx, "kube-proxy", "kube-system", &ds); err != nil {
			return false, err.Error(), nil
		}
		st := ds.Status
		return int(st.NumberAvailable) == want && st.UpdatedNumberScheduled == st.DesiredNumberScheduled,
			fmt.Sprintf("%d/%d available", st.NumberAvailable, want), nil
	})
}

// kindKubeProxyConfig is the KubeProxyConfiguration kind writes when it
// runs kube-proxy itself (and leaves out with kubeProxyMode none): iptables
// mode, a 1 s minimum sync, and no conntrack table sizing, a host-wide
// sysctl a node container must not set. A test checks it against kind's
// template.
var kindKubeProxyConfig = map[string]any{
	"apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
	"kind":       "KubeProxyConfiguration",
	"metadata":   map[string]any{"name": "config"},
	"mode":       string(v1alpha4.IPTablesProxyMode),
	"iptables":   map[string]any{"minSyncPeriod": "1s"},
	"conntrack":  map[string]any{"maxPerCore": 0},
}

// kubeProxyPhaseConfig is kind's kubeadm config with the ClusterConfiguration's
// kubernetesVersion set to v (the addon phase deploys that version's
// image) and the KubeProxyConfiguration kind would have written; every
// other document is kept as kind wrote it.
func kubeProxyPhaseConfig(kindCfg []byte, v kubeversion.Version) ([]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(kindCfg)))
	var docs []map[string]any
	found := false
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		switch m["kind"] {
		case nil, "KubeProxyConfiguration":
			continue // replaced below
		case "ClusterConfiguration":
			m["kubernetesVersion"] = string(v)
			found = true
		}
		docs = append(docs, m)
	}
	if !found {
		return nil, fmt.Errorf("kind's kubeadm config has no ClusterConfiguration")
	}
	var out bytes.Buffer
	for _, m := range append(docs, kindKubeProxyConfig) {
		data, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.Bytes(), nil
}
