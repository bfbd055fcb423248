package probes

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/ndfq/ndfq/fixtures"
)

// criServer answers Status as a runtime does, on a unix socket.
type criServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	resp *runtimeapi.StatusResponse
}

func (s criServer) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return s.resp, nil
}

func serveCRI(t *testing.T, resp *runtimeapi.StatusResponse) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, criServer{resp: resp})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return "unix://" + sock
}

// The runtime-level features and the default handler's user namespaces
// are read; another handler's are not the default's.
func TestReadCRI(t *testing.T) {
	endpoint := serveCRI(t, &runtimeapi.StatusResponse{
		Features: &runtimeapi.RuntimeFeatures{UserNamespacesHostNetwork: true, SupplementalGroupsPolicy: true},
		RuntimeHandlers: []*runtimeapi.RuntimeHandler{
			{Name: "kata", Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: false}},
			{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}},
		},
	})
	got, err := ReadCRI(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if want := (CRIReport{UserNamespacesHostNetwork: true, UserNamespaces: true}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if rt := got.Runtime(); rt != (fixtures.Runtime{UserNamespacesHostNetwork: true, UserNamespaces: true}) {
		t.Errorf("as the oracle takes it: %+v", rt)
	}
	// containerd 1.6's CRI has no features and no handlers: nothing reported.
	if got, err := ReadCRI(context.Background(), serveCRI(t, &runtimeapi.StatusResponse{})); err != nil || got != (CRIReport{}) {
		t.Errorf("empty status: %+v %v", got, err)
	}
	if _, err := ReadCRI(context.Background(), "npipe:////./pipe/containerd"); err == nil || !strings.Contains(err.Error(), "only unix://") {
		t.Errorf("a Windows pipe: %v", err)
	}
}

// The reader pod is bound to its node by name, runs ndfq's read-cri as
// root on the kubelet's socket, tolerates every taint and carries the
// run's label (cleanup finds it).
func TestCRIReaderPod(t *testing.T) {
	p := &prober{id: "abcde", in: RunInput{CRIImage: "ghcr.io/ndfq/ndfq@sha256:0"}}
	pod := p.criReaderPod("node-1", "unix:///var/run/crio/crio.sock")
	c := pod.Spec.Containers[0]
	switch {
	case pod.Spec.NodeName != "node-1", pod.Spec.RestartPolicy != corev1.RestartPolicyNever, pod.Labels[RunLabel] != "abcde":
		t.Errorf("pod %+v", pod.ObjectMeta)
	case pod.Spec.Volumes[0].HostPath.Path != "/var/run/crio/crio.sock", *pod.Spec.Volumes[0].HostPath.Type != corev1.HostPathSocket:
		t.Errorf("volume %+v", pod.Spec.Volumes[0])
	case c.Image != p.in.CRIImage, strings.Join(c.Args, " ") != "probe read-cri --endpoint unix://"+criSocket, c.VolumeMounts[0].MountPath != criSocket:
		t.Errorf("container %+v", c)
	case *c.SecurityContext.RunAsUser != 0, len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0].Operator != corev1.TolerationOpExists:
		t.Errorf("root and tolerations: %+v %+v", c.SecurityContext, pod.Spec.Tolerations)
	}
}

// Only read kubelets are read; without --cri-image an unknown runtime is
// told why nothing reported it, a known one keeps the runtime table.
func TestCRIReadable(t *testing.T) {
	decls := []Declaration{
		{Node: "read", RuntimeFrom: RuntimeRelease},
		{Node: "unknown", RuntimeFrom: RuntimeUnknown},
		{Node: "down", RuntimeFrom: RuntimeUnknown, Unreachable: "connection refused"},
		{Node: "skipped", NotSampled: true},
	}
	without := (&prober{}).criReadable(decls)
	if len(without) != 0 || decls[1].RuntimeUnread == "" || decls[0].RuntimeUnread != "" || decls[2].RuntimeUnread != "" {
		t.Errorf("without --cri-image: %v %+v", without, decls)
	}
	with := (&prober{in: RunInput{CRIImage: "x"}}).criReadable(decls)
	if len(with) != 2 || with[0].Node != "read" || with[1].Node != "unknown" {
		t.Errorf("with --cri-image: %+v", with)
	}
}
