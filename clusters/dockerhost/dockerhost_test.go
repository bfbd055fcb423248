package dockerhost

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndfq/ndfq/internal/progress"
)

const bundleSpec = `{"ociVersion":"1.0.2","process":{"args":["sh"],"capabilities":{
"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE"],
"permitted":["CAP_CHOWN","CAP_SYS_RESOURCE"]},"futureField":{"x":1}},"root":{"path":"rootfs"}}`

func TestRewriteSpecDropsOnlyMissingCaps(t *testing.T) {
	out, changed, err := RewriteSpec([]byte(bundleSpec), true, []string{"CAP_SYS_RESOURCE"})
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	if strings.Contains(string(out), "CAP_SYS_RESOURCE") {
		t.Errorf("CAP_SYS_RESOURCE survived: %s", out)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	p := doc["process"].(map[string]any)
	if _, ok := p["futureField"]; !ok {
		t.Error("fields unknown to ndfq must be kept")
	}
	if b := p["capabilities"].(map[string]any)["bounding"].([]any); len(b) != 1 || b[0] != "CAP_CHOWN" {
		t.Errorf("bounding %v", b)
	}
}

func TestRewriteProcessSpec(t *testing.T) {
	proc := `{"args":["sh"],"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}`
	out, changed, err := RewriteSpec([]byte(proc), false, []string{"CAP_SYS_RESOURCE"})
	if err != nil || !changed || strings.Contains(string(out), "SYS_RESOURCE") || !strings.Contains(string(out), "CAP_KILL") {
		t.Fatalf("changed=%v err=%v out=%s", changed, err, out)
	}
	same, changed, _ := RewriteSpec([]byte(`{"args":["sh"]}`), false, []string{"CAP_SYS_RESOURCE"})
	if changed || string(same) != `{"args":["sh"]}` {
		t.Error("a spec without capabilities must be left byte for byte")
	}
}

func TestRegisterRuntimeKeepsOtherSettingsAndIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.json")
	if err := os.WriteFile(path, []byte(`{"log-level":"warn","runtimes":{"other":{"path":"/x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := registerRuntime(path, "/usr/local/lib/ndfq/ndfq-runc")
	if err != nil || !changed {
		t.Fatalf("first: changed=%v err=%v", changed, err)
	}
	var cfg map[string]any
	data, _ := os.ReadFile(path)
	_ = json.Unmarshal(data, &cfg)
	if cfg["log-level"] != "warn" || cfg["default-runtime"] != RuntimeName {
		t.Errorf("config %v", cfg)
	}
	rts := cfg["runtimes"].(map[string]any)
	if _, ok := rts["other"]; !ok {
		t.Error("other runtimes must be kept")
	}
	if changed, err := registerRuntime(path, "/usr/local/lib/ndfq/ndfq-runc"); err != nil || changed {
		t.Errorf("second call must change nothing: changed=%v err=%v", changed, err)
	}
}

func TestRegisterRuntimeRefusesBrokenJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.json")
	_ = os.WriteFile(path, []byte(`{"log-level":`), 0o644)
	if _, err := registerRuntime(path, "/x"); err == nil || !strings.Contains(err.Error(), "is not valid JSON") {
		t.Fatalf("got %v", err)
	}
}

// Settings below kind's floors are raised, those above are left alone.
func TestRaiseSysctls(t *testing.T) {
	root := t.TempDir()
	write := func(key, v string) {
		p := filepath.Join(root, key)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fs/inotify/max_user_instances", "128")
	write("fs/inotify/max_user_watches", "1048576")
	if err := raiseSysctls(root, inotifyFloors, progress.New(io.Discard)); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"fs/inotify/max_user_instances": "512", "fs/inotify/max_user_watches": "1048576"} {
		got, _ := os.ReadFile(filepath.Join(root, key))
		if strings.TrimSpace(string(got)) != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	if err := raiseSysctls(t.TempDir(), inotifyFloors, progress.New(io.Discard)); err == nil {
		t.Error("a missing setting is an error")
	}
}
