package surgery

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
)

// KubeletBinary is where kind's node images keep the kubelet systemd runs.
const KubeletBinary = "/usr/bin/kubelet"

// originalKubelet keeps the image's own kubelet across in-place swaps.
const originalKubelet = "/usr/bin/kubelet.ndfq-original"

// StopKubelet stops the node's kubelet; its pods keep running.
func StopKubelet(node nodes.Node) error {
	if err := node.Command("systemctl", "stop", "kubelet").Run(); err != nil {
		return fmt.Errorf("stop kubelet on %s: %w", node, err)
	}
	return nil
}

// StartKubelet starts the node's kubelet again.
func StartKubelet(node nodes.Node) error {
	if err := node.Command("systemctl", "start", "kubelet").Run(); err != nil {
		return fmt.Errorf("start kubelet on %s: %w", node, err)
	}
	return nil
}

// RestartKubelet restarts the node's kubelet (what an operator's config
// rollout does). Callers verify the result by observing the node.
func RestartKubelet(node nodes.Node) error {
	if err := node.Command("systemctl", "restart", "kubelet").Run(); err != nil {
		return fmt.Errorf("restart kubelet on %s: %w", node, err)
	}
	return nil
}

// WriteFile replaces a file inside a kind node whole.
func WriteFile(node nodes.Node, path string, data []byte) error {
	// Write a hidden file beside it, then rename: a kubelet must never read
	// half a file, and it ignores hidden files in the static pod folder.
	script := `tmp="$(dirname "$1")/.$(basename "$1").ndfq-tmp"; cat > "$tmp" && mv "$tmp" "$1"`
	if err := node.Command("sh", "-c", script, "sh", path).SetStdin(bytes.NewReader(data)).Run(); err != nil {
		return fmt.Errorf("write %s on %s: %w", path, node, err)
	}
	return nil
}

// setGatesFlag replaces (or adds) --feature-gates in a KUBELET_KUBEADM_ARGS
// env file, keeping every other flag as it was.
func setGatesFlag(env []byte, gates map[string]bool) ([]byte, error) {
	args, err := kubeletArgs(env)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--feature-gates=") {
			kept = append(kept, a)
		}
	}
	if len(gates) > 0 {
		kept = append(kept, "--feature-gates="+topology.FormatGates(gates))
	}
	var out []string
	for _, line := range strings.Split(string(env), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "KUBELET_KUBEADM_ARGS=") {
			line = `KUBELET_KUBEADM_ARGS="` + strings.Join(kept, " ") + `"`
		}
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n")), nil
}

// SetKubeletGates restarts the node's kubelet with exactly these explicit
// gates (nil: none) and returns the ones it had, to put back later.
func SetKubeletGates(node nodes.Node, gates map[string]bool) (previous map[string]bool, err error) {
	if previous, err = WriteKubeletGates(node, gates); err != nil {
		return nil, err
	}
	return previous, RestartKubelet(node)
}

// WriteKubeletGates sets the gates the kubelet starts with next time,
// without restarting it (a binary swap restarts it), and returns the old ones.
func WriteKubeletGates(node nodes.Node, gates map[string]bool) (previous map[string]bool, err error) {
	env, err := ReadFile(node, KubeletFlagsFile)
	if err != nil {
		return nil, err
	}
	if previous, err = gatesOfEnv(env); err != nil {
		return nil, err
	}
	updated, err := setGatesFlag(env, gates)
	if err != nil {
		return nil, err
	}
	return previous, WriteFile(node, KubeletFlagsFile, updated)
}

// KubeletLog is the tail of the node's kubelet journal: why it will not start.
func KubeletLog(node nodes.Node, lines int) string {
	var out bytes.Buffer
	_ = node.Command("journalctl", "-u", "kubelet", "--no-pager", "-n", fmt.Sprint(lines)).SetStdout(&out).Run()
	return out.String()
}

// KubeletActive is whether systemd has the node's kubelet running.
func KubeletActive(node nodes.Node) bool {
	return node.Command("systemctl", "is-active", "--quiet", "kubelet").Run() == nil
}

// SwapKubelet replaces the node's kubelet in place with one of the other
// versions its image carries ("" puts the image's own back) and restarts
// it. Drain the node first: this is a kubelet upgrade or downgrade.
func SwapKubelet(node nodes.Node, version string) error {
	src := originalKubelet
	if version != "" {
		v, err := kubeversion.Parse(version)
		if err != nil {
			return err
		}
		src = nodeimage.OtherKubeletsDir + "/" + v.String() + "/kubelet"
	}
	script := `set -e
[ -x "$1" ] || { echo "no kubelet at $1 in this node image" >&2; exit 3; }
[ -e "$2" ] || cp -p "$3" "$2"
systemctl stop kubelet
cp -p "$1" "$3.ndfq-tmp" && mv "$3.ndfq-tmp" "$3"
systemctl start kubelet`
	return runScript(node, "swap kubelet to "+src, script, src, originalKubelet, KubeletBinary)
}

// RestartStaticPodContainer stops a control-plane component's running
// container; the kubelet starts a new one from the same manifest. It is
// how an operator restarts a component without changing its flags.
func RestartStaticPodContainer(node nodes.Node, component string) error {
	script := `ids=$(crictl ps -q --name "^$1\$") && [ -n "$ids" ] || { echo "no running $1 container" >&2; exit 3; }
crictl stop $ids >/dev/null`
	return runScript(node, "restart "+component, script, component)
}
