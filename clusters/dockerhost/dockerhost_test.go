package dockerhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
