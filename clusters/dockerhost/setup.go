// Package dockerhost makes a Docker engine usable for kind on machines that
// have none running (air-gapped CI, bare VMs): it installs and starts one on
// Debian as root, and registers ndfq's runc wrapper where the host's
// capability bounding set is smaller than what --privileged asks for.
package dockerhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/sh"
)

// RuntimeName is the name ndfq's wrapper is registered under in dockerd.
const RuntimeName = "ndfq-runc"

// Options says where things go; the zero value uses the standard places.
type Options struct {
	DaemonJSON  string // /etc/docker/daemon.json
	ShimSource  string // the built ndfq-runc binary to install
	ShimPath    string // where dockerd runs it from: /usr/local/lib/ndfq/ndfq-runc
	DockerdLog  string // dockerd's output when ndfq starts it
	SysctlRoot  string // /proc/sys
	WaitTimeout time.Duration
	Log         *progress.Logger
}

func (o *Options) defaults() {
	if o.DaemonJSON == "" {
		o.DaemonJSON = "/etc/docker/daemon.json"
	}
	if o.ShimPath == "" {
		o.ShimPath = "/usr/local/lib/ndfq/" + RuntimeName
	}
	if o.DockerdLog == "" {
		o.DockerdLog = "/var/log/ndfq-dockerd.log"
	}
	if o.SysctlRoot == "" {
		o.SysctlRoot = "/proc/sys"
	}
	if o.WaitTimeout == 0 {
		o.WaitTimeout = 90 * time.Second
	}
	if o.ShimSource == "" {
		if self, err := os.Executable(); err == nil {
			o.ShimSource = filepath.Join(filepath.Dir(self), RuntimeName)
		}
	}
}

// Ensure leaves a working Docker engine behind and reports each change it made.
// On a host where `docker info` works and nothing is missing it changes nothing.
func Ensure(ctx context.Context, o Options) error {
	o.defaults()
	// debootstrap builds the node images' root file system; a C compiler,
	// pkg-config and libseccomp build the static runc of a containerd 2 node.
	if err := EnsureTools(ctx, o.Log, map[string]string{"debootstrap": "debootstrap", "gcc": "gcc", "pkg-config": "pkg-config"}); err != nil {
		return err
	}
	if err := EnsureLibraries(ctx, o.Log, map[string]string{"libseccomp": "libseccomp-dev"}); err != nil {
		return err
	}
	if err := raiseSysctls(o.SysctlRoot, inotifyFloors, o.Log); err != nil {
		return err
	}
	missing, err := MissingBoundingCaps()
	if err != nil {
		return err
	}
	// Register the wrapper before any start, so a fresh engine comes up with it.
	changed := false
	if len(missing) > 0 {
		if _, err := exec.LookPath("dockerd"); err != nil {
			if err := aptInstall(ctx, o.Log, "docker.io"); err != nil {
				return fmt.Errorf("docker: no engine and cannot install one: %w", err)
			}
		}
		shimChanged, err := installShim(o)
		if err != nil {
			return err
		}
		cfgChanged, err := registerRuntime(o.DaemonJSON, o.ShimPath)
		if err != nil {
			return err
		}
		// dockerd runs the wrapper by path for every container: a new binary
		// needs no restart, a changed daemon.json does (and stops running clusters).
		if shimChanged {
			o.Log.Printf("docker: installed %s at %s", RuntimeName, o.ShimPath)
		}
		if changed = cfgChanged; changed {
			o.Log.Printf("docker: host lacks %s; registered %s (%s) as the default runtime in %s", strings.Join(missing, ","), RuntimeName, o.ShimPath, o.DaemonJSON)
		}
	}
	switch {
	case !dockerUp(ctx):
		if err := startEngine(ctx, o); err != nil {
			return err
		}
	case changed:
		o.Log.Printf("docker: restarting dockerd to load %s", o.DaemonJSON)
		if err := restartEngine(ctx, o); err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		o.Log.Printf("docker: engine up; capability bounding set is full, no runtime wrapper needed")
		return nil
	}
	if rt := defaultRuntime(ctx); rt != RuntimeName {
		return fmt.Errorf("docker: default runtime is %q, want %q: check %s and restart dockerd", rt, RuntimeName, o.DaemonJSON)
	}
	o.Log.Printf("docker: engine up with runtime %s (drops %s)", RuntimeName, strings.Join(missing, ","))
	return nil
}

func dockerUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return sh.Run(ctx, "docker", "info") == nil
}

func defaultRuntime(ctx context.Context) string {
	out, _ := sh.Output(ctx, "docker", "info", "--format", "{{.DefaultRuntime}}")
	return strings.TrimSpace(string(out))
}

func startEngine(ctx context.Context, o Options) error {
	if _, err := exec.LookPath("dockerd"); err != nil {
		if err := aptInstall(ctx, o.Log, "docker.io"); err != nil {
			return fmt.Errorf("docker: no engine and cannot install one: %w", err)
		}
	}
	if systemdManages(ctx) {
		o.Log.Printf("docker: starting docker.service")
		if err := sh.Run(ctx, "systemctl", "start", "docker"); err != nil {
			return err
		}
	} else if err := spawnDockerd(o); err != nil {
		return err
	}
	return waitUp(ctx, o)
}

func waitUp(ctx context.Context, o Options) error {
	deadline := time.Now().Add(o.WaitTimeout)
	for !dockerUp(ctx) {
		if time.Now().After(deadline) {
			return fmt.Errorf("docker: dockerd did not answer `docker info` within %s; see %s", o.WaitTimeout, o.DockerdLog)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return nil
}

// systemdManages is true where systemd runs and knows docker.service.
func systemdManages(ctx context.Context) bool {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return false
	}
	return sh.Run(ctx, "systemctl", "cat", "docker.service") == nil
}

// spawnDockerd starts dockerd in its own session so it outlives ndfq.
func spawnDockerd(o Options) error {
	logf, err := os.OpenFile(o.DockerdLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command("dockerd") //nolint:noctx // detached on purpose: it outlives ndfq
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("docker: start dockerd: %w", err)
	}
	o.Log.Printf("docker: started dockerd (pid %d, log %s)", cmd.Process.Pid, o.DockerdLog)
	return cmd.Process.Release()
}

func restartEngine(ctx context.Context, o Options) error {
	if systemdManages(ctx) {
		if err := sh.Run(ctx, "systemctl", "restart", "docker"); err != nil {
			return err
		}
		return waitUp(ctx, o)
	}
	if pid, err := dockerdPid(); err == nil {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(o.WaitTimeout)
		for running(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("docker: dockerd (pid %d) did not stop within %s", pid, o.WaitTimeout)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err := spawnDockerd(o); err != nil {
		return err
	}
	return waitUp(ctx, o)
}

// running is false once pid is gone or a zombie (ndfq may be its parent).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func dockerdPid() (int, error) {
	b, err := os.ReadFile("/var/run/docker.pid")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// installShim copies the built wrapper to a stable path (CI clones move).
func installShim(o Options) (bool, error) {
	src, err := os.ReadFile(o.ShimSource)
	if err != nil {
		return false, fmt.Errorf("docker: the runtime wrapper is not built (%w): run `make bin/%s`", err, RuntimeName)
	}
	if cur, err := os.ReadFile(o.ShimPath); err == nil && bytes.Equal(cur, src) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.ShimPath), 0o755); err != nil {
		return false, err
	}
	tmp := o.ShimPath + ".new"
	if err := os.WriteFile(tmp, src, 0o755); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, o.ShimPath)
}

// registerRuntime adds the wrapper to daemon.json as the default runtime,
// keeping every other setting; it reports whether the file changed.
func registerRuntime(path, shim string) (bool, error) {
	cfg := map[string]any{}
	if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &cfg); err != nil {
			return false, fmt.Errorf("docker: %s is not valid JSON: %w", path, err)
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	before, _ := json.Marshal(cfg)
	runtimes, _ := cfg["runtimes"].(map[string]any)
	if runtimes == nil {
		runtimes = map[string]any{}
	}
	runtimes[RuntimeName] = map[string]any{"path": shim}
	cfg["runtimes"] = runtimes
	cfg["default-runtime"] = RuntimeName
	after, _ := json.Marshal(cfg)
	var a, b any
	_ = json.Unmarshal(before, &a)
	_ = json.Unmarshal(after, &b)
	if reflect.DeepEqual(a, b) {
		return false, nil
	}
	out, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, append(out, '\n'), 0o644)
}

// aptInstall installs Debian packages as root, updating the lists once if
// the first try cannot find them.
func aptInstall(ctx context.Context, log *progress.Logger, pkgs ...string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("need root to install %s", strings.Join(pkgs, " "))
	}
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		return fmt.Errorf("not a Debian host: install %s yourself", strings.Join(pkgs, " "))
	}
	done := log.Step("apt-get install %s", strings.Join(pkgs, " "))
	args := append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)
	err := sh.Run(ctx, "apt-get", args...)
	if err != nil {
		if err = sh.Run(ctx, "apt-get", "update", "-qq"); err == nil {
			err = sh.Run(ctx, "apt-get", args...)
		}
	}
	done(err)
	return err
}

// EnsureLibraries installs C libraries pkg-config cannot find from Debian
// packages (pkg-config name -> package name).
func EnsureLibraries(ctx context.Context, log *progress.Logger, libs map[string]string) error {
	return installMissing(ctx, log, libs, func(lib string) bool {
		return exec.CommandContext(ctx, "pkg-config", "--exists", lib).Run() == nil
	})
}

// EnsureTools installs missing host commands from Debian packages
// (command name -> package name), e.g. debootstrap for the base image.
func EnsureTools(ctx context.Context, log *progress.Logger, tools map[string]string) error {
	return installMissing(ctx, log, tools, func(cmd string) bool {
		_, err := exec.LookPath(cmd)
		return err == nil
	})
}

// installMissing apt-gets the package of every want that present denies.
func installMissing(ctx context.Context, log *progress.Logger, wants map[string]string, present func(string) bool) error {
	var pkgs []string
	for want, pkg := range wants {
		if !present(want) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	return aptInstall(ctx, log, pkgs...)
}
