package probes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/ndfq/ndfq/fixtures"
)

// The kubelet reads its runtime's features from the CRI's Status RPC (the
// RuntimeStatus features and runtime handlers) and declares what hangs on
// them. Asking the same RPC on the node tells what the runtime reports,
// whatever its version string says: the oracle's runtime table is then a
// fallback, not the source.

// CRIReport is the part of a runtime's CRI Status the kubelet's
// declarations hang on, as the probe's reader pod prints it.
type CRIReport struct {
	UserNamespacesHostNetwork bool `json:"userNamespacesHostNetwork"`
	MountOptions              bool `json:"mountOptions"`
	// UserNamespaces: the default runtime handler (named "") runs pods
	// with hostUsers false.
	UserNamespaces bool `json:"userNamespaces"`
}

// Runtime is the report as the oracle takes it.
func (r CRIReport) Runtime() fixtures.Runtime {
	return fixtures.Runtime{UserNamespacesHostNetwork: r.UserNamespacesHostNetwork, MountOptions: r.MountOptions, UserNamespaces: r.UserNamespaces}
}

// CRIUnseen says what the reader cannot see: the CRI of ndfq's cri-api
// (v0.37) has no seccompProfileOCI, which 1.38's runtimes may report, so
// features that hang on it stay undecided after a read.
const CRIUnseen = "the CRI reader (k8s.io/cri-api v0.37) cannot see seccompProfileOCI"

// unseen is a read runtime with what the reader cannot see turned on: a
// feature declared differently there is undecided.
func unseen(rt fixtures.Runtime) fixtures.Runtime {
	rt.SeccompProfileOCI = true
	return rt
}

// ReadCRI asks the runtime at endpoint (unix:///path) for its Status, as
// the kubelet does at start.
func ReadCRI(ctx context.Context, endpoint string) (CRIReport, error) {
	if !strings.HasPrefix(endpoint, "unix://") {
		return CRIReport{}, fmt.Errorf("CRI endpoint %q: only unix:// sockets are read", endpoint)
	}
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return CRIReport{}, fmt.Errorf("CRI endpoint %s: %w", endpoint, err)
	}
	defer func() { _ = conn.Close() }()
	resp, err := runtimeapi.NewRuntimeServiceClient(conn).Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return CRIReport{}, fmt.Errorf("CRI Status at %s: %w", endpoint, err)
	}
	return criReportOf(resp), nil
}

func criReportOf(resp *runtimeapi.StatusResponse) CRIReport {
	var r CRIReport
	if f := resp.GetFeatures(); f != nil {
		r.UserNamespacesHostNetwork, r.MountOptions = f.GetUserNamespacesHostNetwork(), f.GetMountOptions()
	}
	for _, h := range resp.GetRuntimeHandlers() {
		if h.GetName() == "" {
			r.UserNamespaces = h.GetFeatures().GetUserNamespaces()
		}
	}
	return r
}

// criSocket is where the reader pod sees the node's CRI socket.
const criSocket = "/ndfq-cri.sock"

// criReaderPod runs image's `ndfq probe read-cri` on node, with the
// socket at endpoint (the kubelet's containerRuntimeEndpoint) mounted: as
// root, which the socket needs, tolerating every taint, bound by name (no
// scheduler: it is not a placement). It prints the report as its
// termination message, so no log read is needed.
func (p *prober) criReaderPod(node, endpoint string) *corev1.Pod {
	root, socket := int64(0), corev1.HostPathSocket
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ndfq-%s-cri-%s", p.id, rand.String(5)), Labels: map[string]string{RunLabel: p.id, ManagedByLabel: ManagedBy}},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{
				Name: "read-cri", Image: p.in.CRIImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args:            []string{"probe", "read-cri", "--endpoint", "unix://" + criSocket},
				SecurityContext: &corev1.SecurityContext{RunAsUser: &root, RunAsNonRoot: new(false)},
				VolumeMounts:    []corev1.VolumeMount{{Name: "cri", MountPath: criSocket}},
				// A failed read says why in the message too (its log's tail).
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{{Name: "cri", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: strings.TrimPrefix(endpoint, "unix://"), Type: &socket}}}},
		},
	}
}

// readRuntimes reads each declaration's runtime from a reader pod on its
// node (in parallel, each bounded by wait-pod-running) and judges it
// again; where no report came, the reason is kept and the earlier
// judgement (the oracle's runtime table, or undecided) stands.
func (p *prober) readRuntimes(ctx context.Context, decls []*Declaration) {
	var wg sync.WaitGroup
	for _, d := range decls {
		wg.Go(func() {
			rt, err := p.readRuntime(ctx, d)
			if err != nil {
				d.RuntimeUnread = err.Error() // the earlier judgement stands; the verdict names why
				return
			}
			d.RuntimeFrom, d.RuntimeUnread = RuntimeCRI, ""
			rt.CPUManagerPolicy = d.CPUManager
			d.judge(rt)
		})
	}
	wg.Wait()
}

// criReadable are the declarations whose kubelet was read (so its socket
// is known and the node is judged); without --cri-image, those whose
// runtime the oracle does not know are told why nothing reported it.
func (p *prober) criReadable(decls []Declaration) []*Declaration {
	var out []*Declaration
	for i := range decls {
		d := &decls[i]
		switch {
		case d.Unreachable != "" || d.Unchecked != "" || d.NotSampled:
		case p.in.CRIImage != "":
			out = append(out, d)
		case d.RuntimeFrom == RuntimeUnknown:
			d.RuntimeUnread = "no CRI read was asked (--cri-image reads it on the node)"
		}
	}
	return out
}

func (p *prober) readRuntime(ctx context.Context, d *Declaration) (fixtures.Runtime, error) {
	if !strings.HasPrefix(d.RuntimeEndpoint, "unix://") {
		return fixtures.Runtime{}, fmt.Errorf("its kubelet's containerRuntimeEndpoint %q is not a unix socket", d.RuntimeEndpoint)
	}
	defer p.slot()()
	created, err := CreatePod(ctx, p.cs, p.ns, p.criReaderPod(d.Node, d.RuntimeEndpoint))
	if err != nil {
		return fixtures.Runtime{}, fmt.Errorf("create its CRI reader pod: %w", err)
	}
	p.remember(created.Name)
	got, err := p.started(ctx, created.Name, func(pod *corev1.Pod) bool { return terminated(pod) != nil })
	if err != nil && (got == nil || terminated(got) == nil) {
		return fixtures.Runtime{}, fmt.Errorf("its CRI reader pod %s: %w", created.Name, err)
	}
	t := terminated(got)
	if t.ExitCode != 0 {
		return fixtures.Runtime{}, fmt.Errorf("its CRI reader pod %s exited %d: %s", created.Name, t.ExitCode, strings.TrimSpace(t.Message))
	}
	var r CRIReport
	if err := json.Unmarshal([]byte(t.Message), &r); err != nil {
		return fixtures.Runtime{}, fmt.Errorf("its CRI reader pod %s printed %q: %w", created.Name, t.Message, err)
	}
	return r.Runtime(), nil
}

// terminated is the reader container's end, nil before it ends.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated
		}
	}
	return nil
}

// CRIReadTimeout bounds the reader's one RPC: the runtime's answer, not a wait.
const CRIReadTimeout = 20 * time.Second

// podSecurityEnforce is Pod Security admission's namespace label.
const podSecurityEnforce = "pod-security.kubernetes.io/enforce"
